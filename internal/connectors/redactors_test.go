package connectors

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/tools"
)

// A redactor kept for one set of values is reused for the same set and
// never serves another: each call's answer loses exactly the values it used.
func TestKeptRedactorsFollowTheValues(t *testing.T) {
	const one, two = "first-secret-0123456789", "second-secret-0123456789"
	redact := func(vals ...string) string {
		_, u := WithUsed(context.Background())
		u.Add(vals...)
		out, err := u.Redact([]tools.Part{{Text: "a " + one + " b " + two}}, errors.New("echo "+one))
		if len(vals) > 0 && strings.Contains(err.Error(), vals[0]) {
			t.Fatalf("error keeps %q", vals[0])
		}
		return out[0].Text
	}
	for range 2 {
		if got := redact(one); strings.Contains(got, one) || !strings.Contains(got, two) {
			t.Fatalf("redacting the first value: %q", got)
		}
		if got := redact(two); strings.Contains(got, two) || !strings.Contains(got, one) {
			t.Fatalf("redacting the second value: %q", got)
		}
		if got := redact(one, two); strings.Contains(got, one) || strings.Contains(got, two) {
			t.Fatalf("redacting both: %q", got)
		}
	}
	if a, b := redactors.of([]string{one}), redactors.of([]string{one}); a != b {
		t.Fatal("the same values built a second redactor")
	}
}
