package tools

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/url"
	"strings"
	"testing"
)

const testSecret = "s3cr3t/Tok+en=42&more<x>" // needs escaping in every encoding

func TestRedactForms(t *testing.T) {
	r := NewRedactor([]string{testSecret}, quietLog)
	jsonHTML, _ := json.Marshal(testSecret)
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(testSecret)
	forms := map[string]string{
		"raw":          testSecret,
		"query":        url.QueryEscape(testSecret),
		"path":         url.PathEscape(testSecret),
		"json html":    string(jsonHTML),
		"json plain":   strings.TrimSpace(plain.String()),
		"json slashes": strings.ReplaceAll(string(jsonHTML), "/", `\/`),
		"b64 std":      base64.StdEncoding.EncodeToString([]byte(testSecret)),
		"b64 url":      base64.URLEncoding.EncodeToString([]byte(testSecret)),
		"b64 raw std":  base64.RawStdEncoding.EncodeToString([]byte(testSecret)),
		"b64 raw url":  base64.RawURLEncoding.EncodeToString([]byte(testSecret)),
	}
	for name, f := range forms {
		t.Run(name, func(t *testing.T) {
			got := r.Redact("before " + f + " after")
			if strings.Contains(got, f) || !strings.Contains(got, RedactionMarker) {
				t.Fatalf("form %q survived: %q", f, got)
			}
			if !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
				t.Fatalf("context damaged: %q", got)
			}
		})
	}
	// Inside a longer base64 text, at each of the three alignments.
	for k := 0; k < 3; k++ {
		for _, e := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
			doc := strings.Repeat("x", k) + testSecret + "tail"
			enc := e.EncodeToString([]byte(doc))
			got := r.Redact(enc)
			if !strings.Contains(got, RedactionMarker) {
				t.Fatalf("alignment %d: base64 text %q not redacted", k, enc)
			}
			// What is left must not decode to any 8 bytes of the secret.
			for _, part := range strings.Split(got, RedactionMarker) {
				if len(part) > 12 {
					t.Fatalf("alignment %d: %d chars survive around the marker: %q", k, len(part), got)
				}
			}
		}
	}
}

func TestRedactRules(t *testing.T) {
	long := "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789" // 40 bytes
	tests := []struct {
		name    string
		secrets []string
		in      string
		want    string
	}{
		{"no secrets", nil, "hello " + long, "hello " + long},
		{"every occurrence", []string{long}, long + " and " + long, "[REDACTED] and [REDACTED]"},
		{"adjacent merged", []string{long}, long + long, "[REDACTED]"},
		{"overlapping secrets merged", []string{"abcdefghijkl", "ghijklmnopqr"}, "xx abcdefghijklmnopqr yy", "xx [REDACTED] yy"},
		{"longest wins", []string{"abcdefgh", "abcdefghijklmnop"}, "abcdefghijklmnop!", "[REDACTED]!"},
		{"short secret ignored", []string{"1234567"}, "pin 1234567", "pin 1234567"},
		{"empty secret ignored", []string{""}, "anything", "anything"},
		{"fragment at end", []string{long}, "token: " + long[:20], "token: [REDACTED]"},
		{"fragment mid-text", []string{long}, long[:15] + "… [clipped]", "[REDACTED]… [clipped]"},
		{"short fragment kept", []string{long}, "x " + long[:FragmentMin-1] + "!", "x " + long[:FragmentMin-1] + "!"},
		{"utf-8 secret", []string{"pässwörd-ünïcode"}, "a pässwörd-ünïcode b", "a [REDACTED] b"},
		{"text shorter than a window", []string{long}, "short", "short"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NewRedactor(tt.secrets, quietLog).Redact(tt.in); got != tt.want {
				t.Fatalf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
	var nilR *Redactor
	if nilR.Redact("x") != "x" || nilR.Secrets() != 0 {
		t.Fatal("nil Redactor must redact nothing")
	}
}

func TestRedactorLogsShortSecretsWithoutValue(t *testing.T) {
	var logs bytes.Buffer
	r := NewRedactor([]string{"hunter2", "", "long-enough-secret"}, slog.New(slog.NewTextHandler(&logs, nil)))
	if r.Secrets() != 1 {
		t.Fatalf("Secrets() = %d, want 1", r.Secrets())
	}
	if !strings.Contains(logs.String(), "count=1") || strings.Contains(logs.String(), "hunter2") {
		t.Fatalf("log = %q", logs.String())
	}
}

func TestRedactNoMatchDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are checked without -race (make test runs them so)")
	}
	r := NewRedactor(randomSecrets(newRand(1), 50), quietLog)
	text := strings.Repeat("plain text without anything secret in it. ", 100)
	if n := testing.AllocsPerRun(20, func() { _ = r.Redact(text) }); n != 0 {
		t.Fatalf("Redact allocated %v times without a match", n)
	}
}
