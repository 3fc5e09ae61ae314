package tools

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// randomSchema builds a random nested schema from the shapes tools use.
func randomSchema(rng *rand.Rand, depth int) map[string]any {
	formats := []string{"date", "date-time", "email", "uri", "uuid"}
	switch k := rng.Intn(7); {
	case depth > 3 || k < 2:
		s := map[string]any{"type": "string"}
		if rng.Intn(2) == 0 {
			s["format"] = formats[rng.Intn(len(formats))]
		}
		if rng.Intn(3) == 0 {
			s["type"] = []any{"string", "null"}
		}
		if rng.Intn(3) == 0 {
			s["description"] = "Some words"
		}
		return s
	case k == 2:
		s := map[string]any{"type": "array"}
		if rng.Intn(3) > 0 {
			s["items"] = randomSchema(rng, depth+1)
		}
		return s
	case k == 3:
		return map[string]any{"anyOf": []any{randomSchema(rng, depth+1), map[string]any{"type": "null"}}}
	case k == 4:
		return map[string]any{"oneOf": []any{randomSchema(rng, depth+1), map[string]any{"type": "integer"}}}
	default:
		props := map[string]any{}
		var req []any
		for i := 0; i < 1+rng.Intn(4); i++ {
			name := fmt.Sprintf("p%d", i)
			props[name] = randomSchema(rng, depth+1)
			if rng.Intn(2) == 0 {
				req = append(req, name)
			}
		}
		s := map[string]any{"type": "object", "properties": props}
		if req != nil {
			s["required"] = req
		}
		if rng.Intn(2) == 0 {
			s["additionalProperties"] = false
		}
		return s
	}
}

func TestPropertyShapeIdempotent(t *testing.T) {
	rng := newRand(42)
	for i := 0; i < 500; i++ {
		root := randomSchema(rng, 1)
		root["type"] = "object"
		raw, _ := json.Marshal(root)
		once, _, err := Shape(raw)
		if err != nil {
			t.Fatalf("Shape(%s): %v", raw, err)
		}
		twice, warnings, err := Shape(once)
		if err != nil || string(twice) != string(once) || len(warnings) != 0 {
			t.Fatalf("not idempotent:\nin    %s\nonce  %s\ntwice %s\n%v %v", raw, once, twice, warnings, err)
		}
		if strings.Contains(string(once), `"additionalProperties":false`) {
			t.Fatalf("additionalProperties false left: %s", once)
		}
	}
}

// encodings lists the forms of s the redactor promises to remove.
func encodings(s string) []string {
	j, _ := json.Marshal(s)
	b := []byte(s)
	return []string{s, url.QueryEscape(s), url.PathEscape(s), string(j[1 : len(j)-1]),
		base64.StdEncoding.EncodeToString(b), base64.URLEncoding.EncodeToString(b),
		base64.RawStdEncoding.EncodeToString(b), base64.RawURLEncoding.EncodeToString(b)}
}

func TestPropertyStampRemovesSecretsAndRespectsCap(t *testing.T) {
	rng := newRand(7)
	const chars = "abcXYZ019 /+=&?%\"\\<>é\n"
	randText := func(n int) string {
		var b strings.Builder
		for b.Len() < n {
			b.WriteString(string([]rune(chars)[rng.Intn(utf8.RuneCountInString(chars))]))
		}
		return b.String()
	}
	for i := 0; i < 300; i++ {
		secrets := randomSecrets(rng, 1+rng.Intn(5))
		for j := range secrets {
			if rng.Intn(2) == 0 {
				secrets[j] += "/+&é" // force escaping
			}
		}
		var raw strings.Builder
		for k := 0; k < 10; k++ {
			raw.WriteString(randText(rng.Intn(200)))
			forms := encodings(secrets[rng.Intn(len(secrets))])
			raw.WriteString(forms[rng.Intn(len(forms))])
		}
		capBytes := MinCap + rng.Intn(3000)
		remaining := rng.Intn(30)
		got := Stamp(raw.String(), StampOptions{Redactor: NewRedactor(secrets, quietLog), Cap: capBytes, Remaining: remaining})
		for _, s := range secrets {
			for _, f := range encodings(s) {
				if strings.Contains(got, f) {
					t.Fatalf("secret form %q survived in %q", f, got)
				}
			}
		}
		trailer := string(appendTrailer(nil, remaining, true))
		if !strings.HasSuffix(got, trailer) {
			t.Fatalf("trailer missing: %q", got)
		}
		if len(got) > capBytes+len(trailer) {
			t.Fatalf("%d bytes > cap %d + trailer %d", len(got), capBytes, len(trailer))
		}
		if !utf8.ValidString(got) {
			t.Fatal("stamped result is not valid UTF-8")
		}
	}
}
