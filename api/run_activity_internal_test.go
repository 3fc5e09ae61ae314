package api

import (
	"strings"
	"testing"
)

// A retried step's last error is shown to operators: what could quote a
// credential is hidden, and it is capped.
func TestRedactFailure(t *testing.T) {
	for _, c := range []struct{ in, leak string }{
		{`401 from provider: Authorization: Bearer sk-or-v1-abcdef0123456789`, "abcdef0123456789"},
		{`dial postgres://guilds:hunter2@db:5432/guilds: refused`, "hunter2"},
		{`bad key sk-ant-0123456789abcdef`, "0123456789abcdef"},
		{`request failed: api_key=ZXCVBNM123456 rejected`, "ZXCVBNM123456"},
	} {
		if got := redactFailure(c.in); strings.Contains(got, c.leak) {
			t.Errorf("redactFailure(%q) = %q", c.in, got)
		}
	}
	if got := redactFailure(strings.Repeat("x", 1000)); len([]rune(got)) != failureChars+1 {
		t.Errorf("a long failure is %d characters", len([]rune(got)))
	}
	if got := redactFailure("model provider unreachable: connection refused"); got != "model provider unreachable: connection refused" {
		t.Errorf("a plain failure changed: %q", got)
	}
}
