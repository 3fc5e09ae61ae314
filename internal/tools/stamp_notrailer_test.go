package tools

import (
	"strings"
	"testing"
)

// NoTrailer runs the pipeline (redaction and the cap) and ends the result
// with the body: no remaining-calls line, no wrap-up line, no blank line.
func TestStampNoTrailer(t *testing.T) {
	secret := "sk-live-0123456789abcdef"
	r := NewRedactor([]string{secret}, quietLog)
	for _, remaining := range []int{0, 3, 50} {
		if got := Stamp("key "+secret+"\n\n", StampOptions{Redactor: r, Remaining: remaining, NoTrailer: true}); got != "key [REDACTED]\n\n" {
			t.Fatalf("remaining %d: %q", remaining, got)
		}
	}
	if got := Stamp("", StampOptions{NoTrailer: true}); got != "" {
		t.Fatalf("empty result: %q", got)
	}
	got := Stamp(strings.Repeat("a", 400), StampOptions{Cap: 150, NoTrailer: true})
	if len(got) > 150 || !strings.HasSuffix(got, "bytes elided: the result was over the byte cap]") {
		t.Fatalf("capped without trailer: %d bytes %q", len(got), got)
	}
}
