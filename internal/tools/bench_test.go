package tools

import (
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"math/rand"
	"net/url"
	"strings"
	"testing"
)

const benchResultSize = 64 << 10

var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomSecrets returns n API-key-like values of 24 to 48 characters.
func randomSecrets(rng *rand.Rand, n int) []string {
	out := make([]string, n)
	for i := range out {
		b := make([]byte, 24+rng.Intn(25))
		for j := range b {
			b[j] = alnum[rng.Intn(len(alnum))]
		}
		out[i] = string(b)
	}
	return out
}

// benchResult builds a JSON-ish tool result of about 64 KiB. With present,
// a few secrets appear in it, raw and encoded.
func benchResult(rng *rand.Rand, secrets []string, present bool) string {
	words := []string{"status", "ok", "\"id\":", "12345", "name", "repository", "https://example.com/a/b",
		"error:", "build", "passed", "{", "}", "[", "]", "value", "2025-01-01T00:00:00Z", "\n", "  "}
	var b strings.Builder
	for b.Len() < benchResultSize {
		if present && rng.Intn(400) == 0 {
			s := secrets[rng.Intn(len(secrets))]
			switch rng.Intn(3) {
			case 0:
				b.WriteString(s)
			case 1:
				b.WriteString(base64.StdEncoding.EncodeToString([]byte(s)))
			default:
				b.WriteString(url.QueryEscape(s))
			}
		}
		b.WriteString(words[rng.Intn(len(words))])
		b.WriteByte(' ')
	}
	return b.String()[:benchResultSize]
}

// replacerFor is the baseline: strings.NewReplacer over the same patterns
// the Redactor searches for (every encoded form of every secret).
func replacerFor(r *Redactor) *strings.Replacer {
	args := make([]string, 0, 2*len(r.patterns))
	for _, p := range r.patterns {
		args = append(args, p, RedactionMarker)
	}
	return strings.NewReplacer(args...)
}

var sink string

func BenchmarkRedact(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		rng := rand.New(rand.NewSource(int64(n)))
		secrets := randomSecrets(rng, n)
		text := benchResult(rng, secrets, true)
		red := NewRedactor(secrets, quietLog)
		rep := replacerFor(red)
		if got, want := red.Redact(text), rep.Replace(text); got != want {
			// The replacer cannot merge overlaps or catch fragments, so only
			// check that both removed every secret.
			for _, s := range secrets {
				if strings.Contains(got, s) {
					b.Fatalf("secret left by Redactor")
				}
			}
			_ = want
		}
		b.Run(fmt.Sprintf("secrets=%d/impl=redactor", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				sink = red.Redact(text)
			}
		})
		b.Run(fmt.Sprintf("secrets=%d/impl=replacer", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				sink = rep.Replace(text)
			}
		})
	}
}

func BenchmarkStamp(b *testing.B) {
	rng := rand.New(rand.NewSource(7))
	secrets := randomSecrets(rng, 100)
	clean := benchResult(rng, secrets, false)
	dirty := benchResult(rng, secrets, true)
	red := NewRedactor(secrets, quietLog)
	cases := []struct {
		name string
		text string
		opt  StampOptions
	}{
		{"copy", clean, StampOptions{}}, // reference: what a plain copy costs
		{"no_redactor", clean, StampOptions{Remaining: 20}},
		{"no_secret_present", clean, StampOptions{Redactor: red, Remaining: 20}},
		{"secrets_present", dirty, StampOptions{Redactor: red, Remaining: 5}},
		{"capped_8KiB", dirty, StampOptions{Redactor: red, Remaining: 5, Cap: 8 << 10}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.text)))
			if c.name == "copy" {
				for b.Loop() {
					sink = strings.Clone(c.text)
				}
				return
			}
			for b.Loop() {
				sink = Stamp(c.text, c.opt)
			}
		})
	}
}

func BenchmarkNewRedactor(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		secrets := randomSecrets(rand.New(rand.NewSource(1)), n)
		b.Run(fmt.Sprintf("secrets=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = NewRedactor(secrets, quietLog)
			}
		})
	}
}

// BenchmarkRedactWriter: the same 64 KiB result written in 4 KiB pieces
// through a Writer (each piece rescans the held-back tail).
func BenchmarkRedactWriter(b *testing.B) {
	rng := rand.New(rand.NewSource(100))
	secrets := randomSecrets(rng, 100)
	text := []byte(benchResult(rng, secrets, true))
	red := NewRedactor(secrets, quietLog)
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		w := red.Writer(io.Discard)
		for i := 0; i < len(text); i += 4 << 10 {
			_, _ = w.Write(text[i:min(i+4<<10, len(text))])
		}
		_ = w.Close()
	}
}
