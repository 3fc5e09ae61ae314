package approvals

import (
	"encoding/json"
	"strings"
	"testing"
)

var walletTypes = map[string]ArgType{"amount": "string", "to": "string", "chain": "string"}
var gmailTypes = map[string]ArgType{"to": "array", "cc": "string", "subject": "string"}

func TestPolicyAsksWhereItsRulesSay(t *testing.T) {
	over := Policy{Rules: []Rule{{Arg: "amount", Op: OpGreater, Value: "0.1"}}}
	outside := Policy{Rules: []Rule{{Arg: "to", Op: OpDomainNotIn, Values: []string{"example.com"}}}}
	cases := []struct {
		name string
		p    Policy
		args string
		want bool
	}{
		{"no rules: every call asks", Policy{}, `{"amount":"0.01"}`, true},
		{"below the threshold", over, `{"amount":"0.1"}`, false},
		{"above by the smallest unit", over, `{"amount":"0.100000000000000001"}`, true},
		{"a number, not a string", over, `{"amount":2}`, true},
		{"missing argument asks", over, `{"to":"0xabc"}`, true},
		{"not a number asks", over, `{"amount":"lots"}`, true},
		{"hex is not a decimal", over, `{"amount":"0x0"}`, true},
		{"leading zeros are decimal", over, `{"amount":"0010"}`, true},
		{"an exponent in a JSON number", over, `{"amount":1e9}`, true},
		{"a small exponent", over, `{"amount":1e-9}`, false},
		{"a key named twice asks", over, `{"amount":"1000","amount":"0.01"}`, true},
		{"inside the domain", outside, `{"to":["a@example.com","B@EXAMPLE.COM"]}`, false},
		{"one recipient outside", outside, `{"to":["a@example.com","x@evil.test"]}`, true},
		{"a display name and a list", outside, `{"to":["Ann <ann@example.com>, bob@example.com"]}`, false},
		{"a subdomain is another domain", outside, `{"to":["a@mail.example.com"]}`, true},
		{"not an address asks", outside, `{"to":["nobody"]}`, true},
		{"no recipients asks", outside, `{"to":[]}`, true},
		{"eq on a chain", Policy{Rules: []Rule{{Arg: "chain", Op: OpEqual, Value: "mainnet"}}}, `{"chain":"sepolia"}`, false},
		{"not_in", Policy{Rules: []Rule{{Arg: "chain", Op: OpNotIn, Values: []string{"sepolia"}}}}, `{"chain":"mainnet"}`, true},
		{"nested path", Policy{Rules: []Rule{{Arg: "tx.value", Op: OpGreaterEqual, Value: "5"}}}, `{"tx":{"value":5}}`, true},
	}
	for _, c := range cases {
		got, _ := c.p.Asks(json.RawMessage(c.args))
		if got != c.want {
			t.Errorf("%s: Asks(%s) = %v, want %v", c.name, c.args, got, c.want)
		}
	}
}

func TestPolicyValidationNamesTheMistake(t *testing.T) {
	cases := []struct {
		p     Policy
		types map[string]ArgType
		want  string // "" = valid
	}{
		{Policy{Rules: []Rule{{Arg: "amount", Op: OpGreater, Value: "0.5"}}}, walletTypes, ""},
		{Policy{Rules: []Rule{{Arg: "amuont", Op: OpGreater, Value: "0.5"}}}, walletTypes, `no argument "amuont"`},
		{Policy{Rules: []Rule{{Arg: "amount", Op: "bigger", Value: "0.5"}}}, walletTypes, "unknown op"},
		{Policy{Rules: []Rule{{Arg: "amount", Op: OpGreater, Value: "half"}}}, walletTypes, "needs a number"},
		{Policy{Rules: []Rule{{Arg: "amount", Op: OpGreater, Value: "1e9"}}}, walletTypes, "needs a number"},
		{Policy{Rules: []Rule{{Arg: "to", Op: OpDomainNotIn, Values: []string{"example.com"}}}}, gmailTypes, ""},
		{Policy{Rules: []Rule{{Arg: "to", Op: OpDomainNotIn, Values: []string{"@example.com"}}}}, gmailTypes, "is not a domain"},
		{Policy{Rules: []Rule{{Arg: "to", Op: OpIn}}}, gmailTypes, "needs a list"},
		{Policy{Rules: []Rule{{Arg: "", Op: OpEqual, Value: "x"}}}, gmailTypes, "arg is required"},
		{Policy{Rules: []Rule{{Arg: "to", Op: OpGreater, Value: "1"}}}, gmailTypes, "compares numbers"},
		{Policy{Rules: make([]Rule, MaxRules+1)}, gmailTypes, "at most"},
	}
	for i, c := range cases {
		err := c.p.Validate(c.types)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("case %d: %v", i, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("case %d: error %v, want one saying %q", i, err, c.want)
		}
	}
}

func TestPolicyVersionChangesWithWhatWouldBeAsked(t *testing.T) {
	p := Policy{Rules: []Rule{{Arg: "amount", Op: OpGreater, Value: "0.1"}}}
	v := Version("guild", "g1", "ask", p)
	if Version("guild", "g1", "ask", p) != v {
		t.Fatal("the version is not a function of the policy")
	}
	q := Policy{Rules: []Rule{{Arg: "amount", Op: OpGreater, Value: "0.2"}}}
	for _, other := range []string{
		Version("guild", "g1", "ask", q),
		Version("organisation", "o1", "ask", p),
		Version("guild", "g1", "ask", Policy{}),
	} {
		if other == v {
			t.Error("a changed policy kept its version")
		}
	}
}
