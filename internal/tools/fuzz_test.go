package tools

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzShape(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"a":{"type":"string","format":"date"}}}`))
	f.Add([]byte(`{"type":"object","required":["a"],"properties":{"a":{"anyOf":[{"type":"string","format":"email"},{"type":"null"}]},"l":{"type":"array"}}}`))
	f.Add([]byte(`{"oneOf":[{"properties":{"x":{"type":"string"}}},{"$ref":"#/$defs/y"}],"$defs":{"y":{"properties":{"z":{}}}}}`))
	f.Add([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","properties":{"t":{"items":[{"format":"date"}]}}}`))
	f.Add([]byte(`true`))
	f.Add([]byte(`{"not":{"additionalProperties":false}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		orig := string(raw)
		shaped, _, err := Shape(raw)
		if string(raw) != orig {
			t.Fatal("Shape modified its input")
		}
		if err != nil {
			return
		}
		if _, err := CompileSchema(shaped); err != nil {
			t.Fatalf("shaped schema does not compile: %v\n%s", err, shaped)
		}
		var root map[string]any
		if err := json.Unmarshal(shaped, &root); err != nil || root["type"] != "object" {
			t.Fatalf("shaped root is not an object schema: %s", shaped)
		}
		again, _, err := Shape(shaped)
		if err != nil || string(again) != string(shaped) {
			t.Fatalf("not idempotent:\n%s\n%s\n%v", shaped, again, err)
		}
	})
}

func FuzzStamp(f *testing.F) {
	f.Add("result with secret-value-123 inside", "secret-value-123", 200, 5)
	f.Add(strings.Repeat("é", 300), "ééééééé", 130, 0)
	f.Add("c2VjcmV0LXZhbHVlLTEyMw==", "secret-value-123", 1000, 9)
	f.Add("x%2Fy", "x/y/z/w/v", 128, 100)
	f.Add("id=736563726574", "secret", 200, 3)                                   // too short: refused when stored
	f.Add("dump: 7365637265742d76616c75652d313233.", "secret-value-123", 200, 3) // hex
	f.Add("DUMP: 7365637265742D76616C75652D313233.", "secret-value-123", 200, 3) // hex, uppercase
	f.Add("u=a%2fb%2bc%3dd%26e", "a/b+c=d&e", 200, 3)                            // lowercase escapes
	f.Fuzz(func(t *testing.T, raw, secret string, capBytes, remaining int) {
		capBytes = MinCap + abs(capBytes)%4096
		remaining = abs(remaining) % 1000
		r := NewRedactor([]string{secret}, quietLog)
		got := Stamp(raw, StampOptions{Redactor: r, Cap: capBytes, Remaining: remaining})
		trailer := string(appendTrailer(nil, remaining, raw != ""))
		if !strings.HasSuffix(got, trailer) {
			t.Fatalf("trailer missing: %q", got)
		}
		if len(got) > capBytes+len(trailer) {
			t.Fatalf("%d bytes > cap %d + trailer %d", len(got), capBytes, len(trailer))
		}
		if utf8.ValidString(raw) && !utf8.ValidString(got) {
			t.Fatal("valid UTF-8 in, invalid out")
		}
		// No form of a secret the redactor keeps may survive, unless the
		// platform's own text (marker, note, trailer) happens to contain it.
		body := strings.TrimSuffix(got, trailer)
		for _, form := range r.patterns {
			if !strings.ContainsAny(form, "[]\n") && !strings.Contains(platformText, form) && strings.Contains(body, form) {
				t.Fatalf("secret %q survived as %q: %q", secret, form, got)
			}
		}
	})
}

// platformText is what Stamp itself writes around a body.
const platformText = RedactionMarker + " bytes elided: the result was over the byte cap"

// FuzzRedactWriter: a text written in three pieces comes out as Redact makes
// the whole text (markers that meet at a piece boundary aside), so a secret
// split across pieces is never missed.
func FuzzRedactWriter(f *testing.F) {
	f.Add("token ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 end", "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789", 10, 20)
	f.Add("hex 7365637265742d76616c75652d313233 end", "secret-value-123", 12, 30)
	f.Add("q=a%2fb%2bc%3dd%26e&x=1", "a/b+c=d&e", 5, 9)
	f.Add("b64 c2VjcmV0LXZhbHVlLTEyMw== tail", "secret-value-123", 8, 16)
	f.Add("cut: secret-value-1", "secret-value-123", 3, 14)
	f.Add("ééééé secret-välue-123 ééé", "secret-välue-123", 7, 15)
	f.Fuzz(func(t *testing.T, text, secret string, i, j int) {
		i, j = abs(i)%(len(text)+1), abs(j)%(len(text)+1)
		if i > j {
			i, j = j, i
		}
		r := NewRedactor([]string{secret, "fixed-second-secret-42"}, quietLog)
		var b strings.Builder
		w := r.Writer(&b)
		for _, piece := range []string{text[:i], text[i:j], text[j:]} {
			if _, err := w.Write([]byte(piece)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if got, want := collapseMarkers(b.String()), collapseMarkers(r.Redact(text)); got != want {
			t.Fatalf("split at %d,%d:\ngot  %q\nwant %q", i, j, got, want)
		}
	})
}

func abs(n int) int {
	if n < 0 {
		if n == -n { // math.MinInt
			return 0
		}
		return -n
	}
	return n
}
