package tools

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestShapeGolden shapes every testdata/shape/*.input.json and compares the
// result (indented) and its warnings with the matching .golden file.
func TestShapeGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/shape/*.input.json")
	if err != nil || len(inputs) == 0 {
		t.Fatalf("no golden inputs: %v", err)
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".input.json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			before := bytes.Clone(raw)
			got := renderShape(t, raw)
			if !bytes.Equal(raw, before) {
				t.Fatal("Shape modified its input")
			}
			golden := strings.TrimSuffix(in, ".input.json") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestShapeGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("shape(%s) mismatch\n--- got\n%s\n--- want\n%s", name, got, want)
			}
		})
	}
}

func renderShape(t *testing.T, raw []byte) []byte {
	t.Helper()
	shaped, warnings, err := Shape(raw)
	var out bytes.Buffer
	if err != nil {
		out.WriteString("error: " + err.Error() + "\n")
		return out.Bytes()
	}
	if err := json.Indent(&out, shaped, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteString("\n")
	for _, w := range warnings {
		out.WriteString("warning: " + w + "\n")
	}
	again, _, err := Shape(shaped)
	if err != nil || !bytes.Equal(again, shaped) {
		t.Fatalf("shaping is not idempotent:\n%s\n%s (%v)", shaped, again, err)
	}
	return out.Bytes()
}

// shapeProp shapes schema and returns the value at the slash path inside it.
func shapeAt(t *testing.T, schema, path string) any {
	t.Helper()
	shaped, _, err := Shape(json.RawMessage(schema))
	if err != nil {
		t.Fatalf("Shape: %v", err)
	}
	doc, _ := decodeJSON(shaped)
	return resolveRef(doc, "#"+path)
}

func TestShapeRules(t *testing.T) {
	tests := []struct {
		name, schema, path string
		want               string // JSON of the value at path; "<absent>" when missing
	}{
		{"optional format stripped", `{"type":"object","properties":{"a":{"type":"string","format":"date"}}}`,
			"/properties/a/format", "<absent>"},
		{"required format kept", `{"type":"object","required":["a"],"properties":{"a":{"type":"string","format":"date"}}}`,
			"/properties/a/format", `"date"`},
		{"nullable type list", `{"type":"object","required":["a"],"properties":{"a":{"type":["string","null"],"format":"date"}}}`,
			"/properties/a/format", "<absent>"},
		{"nullable keyword", `{"type":"object","required":["a"],"properties":{"a":{"type":"string","nullable":true,"format":"date"}}}`,
			"/properties/a/format", "<absent>"},
		{"anyOf null branch strips every branch", `{"type":"object","required":["a"],"properties":{"a":{"anyOf":[{"type":"string","format":"date"},{"type":"null"}]}}}`,
			"/properties/a/anyOf/0/format", "<absent>"},
		{"enum with null", `{"type":"object","required":["a"],"properties":{"a":{"type":["string","null"],"enum":["x",null],"format":"x"}}}`,
			"/properties/a/format", "<absent>"},
		{"optional branch strips", `{"type":"object","properties":{"a":{"oneOf":[{"type":"string","format":"date"},{"type":"integer"}]}}}`,
			"/properties/a/oneOf/0/format", "<absent>"},
		{"required allOf keeps", `{"type":"object","required":["a"],"properties":{"a":{"allOf":[{"type":"string","format":"date"}]}}}`,
			"/properties/a/allOf/0/format", `"date"`},
		{"nested optional stripped", `{"type":"object","required":["o"],"properties":{"o":{"type":"object","properties":{"d":{"type":"string","format":"date"}}}}}`,
			"/properties/o/properties/d/format", "<absent>"},
		{"nested required kept", `{"type":"object","properties":{"o":{"type":"object","required":["d"],"properties":{"d":{"type":"string","format":"date"}}}}}`,
			"/properties/o/properties/d/format", `"date"`},
		{"array item kept", `{"type":"object","required":["l"],"properties":{"l":{"type":"array","items":{"type":"string","format":"date"}}}}`,
			"/properties/l/items/format", `"date"`},
		{"nullable array item stripped", `{"type":"object","required":["l"],"properties":{"l":{"type":"array","items":{"type":["string","null"],"format":"date"}}}}`,
			"/properties/l/items/format", "<absent>"},
		{"item object optional property stripped", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","properties":{"d":{"type":"string","format":"date"}}}}}}`,
			"/properties/l/items/properties/d/format", "<absent>"},
		{"additionalProperties false dropped deep", `{"type":"object","properties":{"l":{"type":"array","items":{"type":"object","additionalProperties":false}}}}`,
			"/properties/l/items/additionalProperties", "<absent>"},
		{"additionalProperties schema kept", `{"type":"object","additionalProperties":{"type":"integer"}}`,
			"/additionalProperties", `{"type":"integer"}`},
		{"not untouched", `{"type":"object","properties":{"a":{"not":{"type":"string","format":"email"}}}}`,
			"/properties/a/not/format", `"email"`},
		{"if untouched", `{"type":"object","properties":{"a":{"if":{"format":"email"},"then":{"format":"email"}}}}`,
			"/properties/a/if/format", `"email"`},
		{"then inherits optional", `{"type":"object","properties":{"a":{"if":{"format":"email"},"then":{"format":"email"}}}}`,
			"/properties/a/then/format", "<absent>"},
		{"definition of an optional site loosened", `{"type":"object","$defs":{"d":{"type":"string","format":"date"}},"properties":{"a":{"$ref":"#/$defs/d"}}}`,
			"/$defs/d/format", "<absent>"},
		{"definition of required sites kept", `{"type":"object","required":["a"],"$defs":{"d":{"type":"string","format":"date"}},"properties":{"a":{"$ref":"#/$defs/d"}}}`,
			"/$defs/d/format", `"date"`},
		{"definition of a nullable site loosened", `{"type":"object","required":["a"],"$defs":{"d":{"type":"string","format":"date"}},"properties":{"a":{"anyOf":[{"$ref":"#/$defs/d"},{"type":"null"}]}}}`,
			"/$defs/d/format", "<absent>"},
		{"loosening reaches chained definitions", `{"type":"object","$defs":{"d":{"$ref":"#/$defs/e"},"e":{"type":"string","format":"uri"}},"properties":{"a":{"$ref":"#/$defs/d"}}}`,
			"/$defs/e/format", "<absent>"},
		{"a loosened definition keeps its required properties' formats", `{"type":"object","$defs":{"p":{"type":"object","required":["at"],"properties":{"at":{"type":"string","format":"date-time"}}}},"properties":{"a":{"$ref":"#/$defs/p"}}}`,
			"/$defs/p/properties/at/format", `"date-time"`},
		{"hint on optional string", `{"type":"object","properties":{"a":{"type":"string","description":"Words"}}}`,
			"/properties/a/description", `"Words. Omit this key when unused."`},
		{"hint without description", `{"type":"object","properties":{"a":{"type":"string"}}}`,
			"/properties/a/description", `"Omit this key when unused."`},
		{"hint on $ref to string", `{"type":"object","$defs":{"d":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/d"}}}`,
			"/properties/a/description", `"Omit this key when unused."`},
		{"hint on enum of strings", `{"type":"object","properties":{"a":{"enum":["x","y"]}}}`,
			"/properties/a/description", `"Omit this key when unused."`},
		{"no hint when omit said", `{"type":"object","properties":{"a":{"type":"string","description":"OMITTED means all."}}}`,
			"/properties/a/description", `"OMITTED means all."`},
		{"no hint on required string", `{"type":"object","required":["a"],"properties":{"a":{"type":"string"}}}`,
			"/properties/a/description", "<absent>"},
		{"no hint on optional integer", `{"type":"object","properties":{"a":{"type":"integer"}}}`,
			"/properties/a/description", "<absent>"},
		{"array gets items", `{"type":"object","properties":{"a":{"type":"array"}}}`,
			"/properties/a/items", `{}`},
		{"$schema dropped", `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`,
			"/$schema", "<absent>"},
		{"$comment dropped deep", `{"type":"object","properties":{"a":{"type":"integer","$comment":"x"}}}`,
			"/properties/a/$comment", "<absent>"},
		{"examples kept", `{"type":"object","properties":{"a":{"type":"integer","examples":[1]}}}`,
			"/properties/a/examples", `[1]`},
		{"root type added", `{"properties":{}}`, "/type", `"object"`},
		{"root properties added", `{"type":"object"}`, "/properties", `{}`},
		{"big numbers exact", `{"type":"object","properties":{"a":{"type":"integer","maximum":12345678901234567890}}}`,
			"/properties/a/maximum", `12345678901234567890`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := shapeAt(t, tt.schema, tt.path)
			got := "<absent>"
			if v != nil {
				got = mustEncode(v)
			}
			if got != tt.want {
				t.Fatalf("at %s got %s, want %s", tt.path, got, tt.want)
			}
		})
	}
}

func TestShapeRefuses(t *testing.T) {
	for _, s := range []string{
		`false`, `"x"`, `[]`, `{"type":"string"}`, `{"type":["array","null"]}`, `{"type":"objec"}`,
		`{`, `{"$ref":"https://example.com/x.json"}`, `{"$ref":"file:///etc/passwd"}`, `{} {}`,
	} {
		if out, _, err := Shape(json.RawMessage(s)); err == nil {
			t.Errorf("Shape(%s) = %s, want an error", s, out)
		}
	}
}

func TestShapeKeepsIDForExternalRefs(t *testing.T) {
	// A root $id is the base of relative references; without external refs it goes.
	out, _, err := Shape(json.RawMessage(`{"$id":"https://x.test/a.json","type":"object","properties":{"a":{"$ref":"#/$defs/b"}},"$defs":{"b":{"type":"integer"}}}`))
	if err != nil || strings.Contains(string(out), "$id") {
		t.Fatalf("Shape = %s, %v", out, err)
	}
}

func TestShapeAll(t *testing.T) {
	in := []Offer{
		{Name: "good", Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"array"}}}`)},
		{Name: "bad_schema", Schema: json.RawMessage(`{"type":"string"}`)},
		{Name: "bad name!", Schema: json.RawMessage(`{}`)},
		{Name: "good", Schema: json.RawMessage(`{}`)},
		{Name: "also_good", Schema: json.RawMessage(`{}`)},
	}
	out, warnings := ShapeAll(in)
	if len(out) != 2 || out[0].Name != "good" || out[1].Name != "also_good" {
		t.Fatalf("ShapeAll kept %+v", out)
	}
	if out[0].Validator == nil || len(out[0].Shaped) == 0 {
		t.Fatal("ShapeAll did not fill Shaped and Validator")
	}
	joined := strings.Join(warnings, "\n")
	for _, want := range []string{`tool "bad_schema" left out`, `tool "bad name!" left out`, `tool "good" left out: duplicate`, `tool "good": array at /properties/a`} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %q:\n%s", want, joined)
		}
	}
}
