package tools

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"
)

func newRand(seed int64) *rand.Rand { return rand.New(rand.NewSource(seed)) }

func TestStampTrailer(t *testing.T) {
	tests := []struct {
		remaining int
		want      string
	}{
		{20, "ok\n\nremaining_tool_calls: 20"},
		{9, "ok\n\nremaining_tool_calls: 9"},
		{8, "ok\n\nOnly 8 tool calls remain: wrap up and give your final answer.\nremaining_tool_calls: 8"},
		{1, "ok\n\nOnly 1 tool call remains: wrap up and give your final answer.\nremaining_tool_calls: 1"},
		{0, "ok\n\nNo tool calls remain: do not call another tool; give your final answer now.\nremaining_tool_calls: 0"},
		{-3, "ok\n\nNo tool calls remain: do not call another tool; give your final answer now.\nremaining_tool_calls: 0"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.remaining), func(t *testing.T) {
			if got := Stamp("ok", StampOptions{Remaining: tt.remaining}); got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	if got := Stamp("", StampOptions{Remaining: 30}); got != "remaining_tool_calls: 30" {
		t.Fatalf("empty result: %q", got)
	}
}

func TestStampOrder(t *testing.T) {
	secret := "sk-live-0123456789abcdef"
	r := NewRedactor([]string{secret}, quietLog)
	// The filter runs first: it can reveal a secret (here by decoding), and
	// redaction still catches it.
	filter := func(s string) string { return strings.ReplaceAll(s, "<KEY>", secret) }
	got := Stamp("key=<KEY>", StampOptions{Filter: filter, Redactor: r, Remaining: 10})
	if got != "key=[REDACTED]\n\nremaining_tool_calls: 10" {
		t.Fatalf("got %q", got)
	}
	// A panicking filter is skipped; the raw result still goes through redaction.
	boom := func(string) string { panic("no") }
	got = Stamp(secret, StampOptions{Filter: boom, Redactor: r, Remaining: 10, Log: quietLog})
	if got != "[REDACTED]\n\nremaining_tool_calls: 10" {
		t.Fatalf("got %q", got)
	}
}

func TestStampCap(t *testing.T) {
	raw := strings.Repeat("é", 200) // 400 bytes
	got := Stamp(raw, StampOptions{Cap: 150, Remaining: 50})
	body, trailer, ok := strings.Cut(got, "\n\nremaining_tool_calls: ")
	if !ok || trailer != "50" {
		t.Fatalf("trailer lost: %q", got)
	}
	if len(body) > 150 {
		t.Fatalf("body is %d bytes, cap 150", len(body))
	}
	if !utf8.ValidString(body) {
		t.Fatalf("cut inside a character: %q", body)
	}
	kept := strings.Count(body, "é")
	if want := fmt.Sprintf("[... %d bytes elided: the result was over the byte cap]", 400-2*kept); !strings.HasSuffix(body, want) {
		t.Fatalf("body %q lacks %q", body, want)
	}
	if got := Stamp(strings.Repeat("a", DefaultCap), StampOptions{}); strings.Contains(got, "elided") {
		t.Fatal("a result of exactly DefaultCap bytes was cut")
	}
	if got := Stamp(strings.Repeat("a", DefaultCap+1), StampOptions{}); !strings.Contains(got, "elided") {
		t.Fatal("a result over DefaultCap was not cut")
	}
	if got := Stamp(strings.Repeat("a", 1000), StampOptions{Cap: 1}); len(got) > MinCap+len("\n\nremaining_tool_calls: 0")+80 {
		t.Fatalf("tiny cap not raised to MinCap: %d bytes", len(got))
	}
}

func TestStampCapNeverSplitsMarkerOrSecret(t *testing.T) {
	secret := "abcdefghijklmnopqrstuvwxyz0123456789"
	r := NewRedactor([]string{secret}, quietLog)
	for pad := 0; pad < 200; pad++ {
		raw := strings.Repeat(".", pad) + secret + strings.Repeat(".", 300)
		got := Stamp(raw, StampOptions{Redactor: r, Cap: MinCap + 40, Remaining: 20})
		body, _, _ := strings.Cut(got, "\n[... ")
		if strings.Contains(body, "abcdefgh") {
			t.Fatalf("pad %d: part of the secret visible: %q", pad, body)
		}
		if i := strings.IndexByte(body, '['); i >= 0 && !strings.HasPrefix(body[i:], RedactionMarker) {
			t.Fatalf("pad %d: marker cut: %q", pad, body)
		}
	}
}

func TestStampAllocatesOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without -race (make test runs them so)")
	}
	r := NewRedactor(randomSecrets(newRand(2), 100), quietLog)
	raw := strings.Repeat("a tool result line\n", 5000)
	for _, opt := range []StampOptions{{Redactor: r, Remaining: 3}, {Redactor: r, Cap: 4096}, {}} {
		if n := testing.AllocsPerRun(10, func() { _ = Stamp(raw, opt) }); n != 1 {
			t.Fatalf("Stamp allocated %v times, want 1", n)
		}
	}
}
