package approvals

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestDigestIgnoresKeyOrderAndSpaceOnly(t *testing.T) {
	same := []string{
		`{"to":"0xabc","amount":"1.5","memo":"<rent>"}`,
		`{ "memo" : "\u003crent>", "amount":"1.5",
		   "to":"0xabc" }`,
	}
	want := mustDigest(t, same[0])
	for _, s := range same[1:] {
		if got := mustDigest(t, s); got != want {
			t.Errorf("Digest(%s) = %s, want %s", s, got, want)
		}
	}
	differ := []string{
		`{"to":"0xabc","amount":"1.50","memo":"<rent>"}`, // one byte more in a value
		`{"to":"0xabd","amount":"1.5","memo":"<rent>"}`,  // one byte changed
		`{"to":"0xabc","amount":1.5,"memo":"<rent>"}`,    // number, not string
		`{"to":"0xabc","amount":"1.5","memo":"<rent>","x":null}`,
		`{"to":"0xabc","amount":"1.5","memo":["<rent>"]}`,
	}
	for _, s := range differ {
		if got := mustDigest(t, s); got == want {
			t.Errorf("Digest(%s) equals the approved call's digest", s)
		}
	}
	if a, b := mustDigest(t, `{"n":1}`), mustDigest(t, `{"n":1.0}`); a == b {
		t.Error("1 and 1.0 digest alike: an approval would stretch over a literal the operator did not see")
	}
	if a, b := mustDigest(t, ``), mustDigest(t, `{}`); a != b {
		t.Error("empty arguments and {} digest apart")
	}
}

func TestDigestRefusesAmbiguousArguments(t *testing.T) {
	for _, s := range []string{
		`{"amount":"1","amount":"1000"}`,
		`{"a":{"b":1,"b":2}}`,
	} {
		if _, err := Digest(json.RawMessage(s)); !errors.Is(err, ErrDuplicateKey) {
			t.Errorf("Digest(%s) error = %v, want ErrDuplicateKey", s, err)
		}
	}
	for _, s := range []string{`{"a":1} {"b":2}`, `{"a":`, "{\"a\":\"\xff\"}"} {
		if _, err := Digest(json.RawMessage(s)); err == nil {
			t.Errorf("Digest(%q) accepted", s)
		}
	}
}

func FuzzCanonicalIsStable(f *testing.F) {
	f.Add(`{"b":[1,{"z":true,"a":null}],"a":"x<y>"}`)
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Canonical(json.RawMessage(s))
		if err != nil {
			return
		}
		again, err := Canonical(c)
		if err != nil {
			t.Fatalf("the canonical form %s does not parse: %v", c, err)
		}
		if string(again) != string(c) {
			t.Fatalf("canonical form not stable: %s then %s", c, again)
		}
	})
}

func mustDigest(t *testing.T, s string) string {
	t.Helper()
	d, err := Digest(json.RawMessage(s))
	if err != nil {
		t.Fatalf("Digest(%s): %v", s, err)
	}
	return d
}
