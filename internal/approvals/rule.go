package approvals

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/mail"
	"regexp"
	"strings"
)

// Op is a rule's comparison. The set is small on purpose: an operator must be
// able to read a policy and know which calls it stops.
type Op string

const (
	OpGreater      Op = "gt"  // number (or decimal string) above Value
	OpGreaterEqual Op = "gte" // at or above
	OpLess         Op = "lt"
	OpLessEqual    Op = "lte"
	OpEqual        Op = "eq"     // string or number equal to Value
	OpNotEqual     Op = "ne"     //
	OpIn           Op = "in"     // string among Values
	OpNotIn        Op = "not_in" // string not among Values
	// OpDomainNotIn matches when any e-mail address in the argument (a
	// string, a comma-separated list or an array of strings) has a domain
	// outside Values.
	OpDomainNotIn Op = "domain_not_in"
)

// Rule asks when one argument of the call matches. Arg is a top-level
// argument name or a dotted path into nested objects.
type Rule struct {
	Arg    string   `json:"arg"`
	Op     Op       `json:"op"`
	Value  string   `json:"value,omitempty"`
	Values []string `json:"values,omitempty"`
}

// Policy is what a scope says about one tool when its switch reads Ask. With
// no rules every call asks; with rules a call asks when any rule matches, and
// also when an argument a rule reads is missing or of the wrong shape (a
// policy that cannot be evaluated asks rather than lets through).
type Policy struct {
	Rules []Rule `json:"rules,omitempty"`
}

// MaxRules bounds one policy.
const MaxRules = 16

// ArgType is the JSON Schema type of an argument, as the tool declares it;
// "" when the schema does not say.
type ArgType string

// Validate checks a policy against the tool's argument types (from its input
// schema, by Rule.Arg) when it is saved, so a typo never becomes a rule that
// silently asks for every call, or for none.
func (p Policy) Validate(types map[string]ArgType) error {
	if len(p.Rules) > MaxRules {
		return fmt.Errorf("a policy holds at most %d rules, this one has %d", MaxRules, len(p.Rules))
	}
	for i, r := range p.Rules {
		if err := r.validate(types); err != nil {
			return fmt.Errorf("rule %d: %w", i+1, err)
		}
	}
	return nil
}

func (r Rule) validate(types map[string]ArgType) error {
	if r.Arg == "" {
		return errors.New("arg is required: name the argument the rule reads")
	}
	t, known := types[r.Arg]
	if !known {
		return fmt.Errorf("the tool has no argument %q", r.Arg)
	}
	switch r.Op {
	case OpGreater, OpGreaterEqual, OpLess, OpLessEqual:
		if t != "" && t != "number" && t != "integer" && t != "string" {
			return fmt.Errorf("%s compares numbers, and %q is a %s", r.Op, r.Arg, t)
		}
		if _, ok := decimal(r.Value); !ok {
			return fmt.Errorf("%s needs a number as value, not %q", r.Op, r.Value)
		}
		if len(r.Values) > 0 {
			return fmt.Errorf("%s takes one value, not values", r.Op)
		}
	case OpEqual, OpNotEqual:
		if r.Value == "" {
			return fmt.Errorf("%s needs a value", r.Op)
		}
		if len(r.Values) > 0 {
			return fmt.Errorf("%s takes one value, not values", r.Op)
		}
	case OpIn, OpNotIn, OpDomainNotIn:
		if len(r.Values) == 0 {
			return fmt.Errorf("%s needs a list of values", r.Op)
		}
		if r.Value != "" {
			return fmt.Errorf("%s takes values, not one value", r.Op)
		}
		if r.Op == OpDomainNotIn {
			if t != "" && t != "string" && t != "array" {
				return fmt.Errorf("%s reads addresses, and %q is a %s", r.Op, r.Arg, t)
			}
			for _, d := range r.Values {
				if d == "" || strings.ContainsAny(d, "@ ,") {
					return fmt.Errorf("%q is not a domain", d)
				}
			}
		}
	default:
		return fmt.Errorf("unknown op %q (one of gt, gte, lt, lte, eq, ne, in, not_in, domain_not_in)", r.Op)
	}
	return nil
}

// Asks reports whether the call with these arguments must wait for a person,
// and which rule decided (its 1-based number; 0 when every call asks).
func (p Policy) Asks(args json.RawMessage) (bool, int) {
	if len(p.Rules) == 0 {
		return true, 0
	}
	// Arguments that cannot be digested (a key named twice) are read
	// differently by different parsers: they always ask.
	if _, err := Canonical(args); err != nil {
		return true, 1
	}
	var root map[string]any
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		return true, 1
	}
	for i, r := range p.Rules {
		if r.matches(root) {
			return true, i + 1
		}
	}
	return false, 0
}

func (r Rule) matches(root map[string]any) bool {
	v, ok := lookup(root, r.Arg)
	if !ok {
		return true
	}
	switch r.Op {
	case OpGreater, OpGreaterEqual, OpLess, OpLessEqual:
		got, ok := decimalOf(v)
		if !ok {
			return true
		}
		want, _ := decimal(r.Value)
		c := got.Cmp(want)
		switch r.Op {
		case OpGreater:
			return c > 0
		case OpGreaterEqual:
			return c >= 0
		case OpLess:
			return c < 0
		default:
			return c <= 0
		}
	case OpEqual, OpNotEqual:
		eq := scalarEqual(v, r.Value)
		return eq == (r.Op == OpEqual)
	case OpIn, OpNotIn:
		s, ok := v.(string)
		if !ok {
			return true
		}
		in := contains(r.Values, s)
		return in == (r.Op == OpIn)
	case OpDomainNotIn:
		addrs, ok := addresses(v)
		if !ok || len(addrs) == 0 {
			return true
		}
		for _, a := range addrs {
			at := strings.LastIndexByte(a, '@')
			if at < 0 || !containsFold(r.Values, a[at+1:]) {
				return true
			}
		}
		return false
	}
	return true
}

func lookup(root map[string]any, path string) (any, bool) {
	var cur any = root
	for _, part := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[part]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// decimal parses an exact decimal; amounts are compared without float error.
func decimal(s string) (*big.Rat, bool) {
	if !decimalForm.MatchString(s) {
		return nil, false
	}
	return new(big.Rat).SetString(s)
}

// decimalForm is plain decimal notation: no exponent, base prefix or fraction
// bar, each of which big.Rat would otherwise read.
var decimalForm = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?$`)

func decimalOf(v any) (*big.Rat, bool) {
	switch t := v.(type) {
	case json.Number:
		return new(big.Rat).SetString(t.String())
	case string:
		return decimal(t)
	}
	return nil, false
}

func scalarEqual(v any, want string) bool {
	switch t := v.(type) {
	case string:
		return t == want
	case json.Number:
		a, ok1 := decimalOf(t)
		b, ok2 := decimal(want)
		return ok1 && ok2 && a.Cmp(b) == 0
	case bool:
		return (t && want == "true") || (!t && want == "false")
	}
	return false
}

func addresses(v any) ([]string, bool) {
	var raw []string
	switch t := v.(type) {
	case string:
		raw = []string{t}
	case []any:
		for _, e := range t {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			raw = append(raw, s)
		}
	default:
		return nil, false
	}
	var out []string
	for _, s := range raw {
		list, err := mail.ParseAddressList(s)
		if err != nil {
			return nil, false
		}
		for _, a := range list {
			out = append(out, strings.ToLower(a.Address))
		}
	}
	return out, true
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func containsFold(list []string, s string) bool {
	for _, e := range list {
		if strings.EqualFold(e, s) {
			return true
		}
	}
	return false
}

// ArgTypes reads the argument types a policy may name from a tool's input
// schema: its top-level properties and, one level down, the properties of
// object properties (as "parent.child").
func ArgTypes(schema json.RawMessage) map[string]ArgType {
	type node struct {
		Type       any             `json:"type"`
		Properties map[string]node `json:"properties"`
	}
	var root node
	out := map[string]ArgType{}
	if json.Unmarshal(schema, &root) != nil {
		return out
	}
	typeOf := func(n node) ArgType {
		if s, ok := n.Type.(string); ok {
			return ArgType(s)
		}
		return "" // a list of types, or none: any shape
	}
	for name, p := range root.Properties {
		out[name] = typeOf(p)
		for child, c := range p.Properties {
			out[name+"."+child] = typeOf(c)
		}
	}
	return out
}
