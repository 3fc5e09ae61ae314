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
		// A secret the redactor keeps must not survive, unless the
		// platform's own text (marker, note, trailer) happens to contain it.
		body := strings.TrimSuffix(got, trailer)
		if len(secret) >= MinSecretLen && !strings.ContainsAny(secret, "[]\n") &&
			!strings.Contains(RedactionMarker+" bytes elided: the result was over the byte cap", secret) &&
			strings.Contains(body, secret) {
			t.Fatalf("secret %q survived: %q", secret, got)
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
