package tools

import (
	"encoding/json"
	"testing"
)

func TestDropOptionalEmptyStrings(t *testing.T) {
	schema := json.RawMessage(`{"type":"object","required":["q","opts"],
	 "properties":{"q":{"type":"string"},"lang":{"type":"string"},"n":{"type":"integer"},
	  "opts":{"type":"object","required":["mode"],"properties":{"mode":{"type":"string"},"cursor":{"type":"string"}}},
	  "ref":{"$ref":"#/$defs/o"}},
	 "$defs":{"o":{"type":"object","properties":{"x":{"type":"string"}}}}}`)
	tests := []struct{ name, in, want string }{
		{"optional dropped, required kept", `{"q":"","lang":"","n":3,"opts":{"mode":""}}`, `{"n":3,"opts":{"mode":""},"q":""}`},
		{"nested optional dropped", `{"q":"x","opts":{"mode":"a","cursor":""}}`, `{"opts":{"mode":"a"},"q":"x"}`},
		{"through $ref", `{"q":"x","opts":{"mode":"a"},"ref":{"x":""}}`, `{"opts":{"mode":"a"},"q":"x","ref":{}}`},
		{"undeclared kept", `{"q":"x","opts":{"mode":"a"},"other":""}`, `{"q":"x","opts":{"mode":"a"},"other":""}`},
		{"unchanged bytes", `{ "q" : "x",  "big": 12345678901234567890 }`, `{ "q" : "x",  "big": 12345678901234567890 }`},
		{"non-empty kept", `{"q":"x","lang":"fr","opts":{"mode":"a"}}`, `{"q":"x","lang":"fr","opts":{"mode":"a"}}`},
		{"no arguments", ``, `{}`},
		{"numbers exact and html unescaped", `{"q":"<a&b>","lang":"","n":12345678901234567890,"opts":{"mode":"a"}}`, `{"n":12345678901234567890,"opts":{"mode":"a"},"q":"<a&b>"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DropOptionalEmptyStrings(schema, json.RawMessage(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	for _, bad := range []string{`[1]`, `{"q":`, `"x"`} {
		if _, err := DropOptionalEmptyStrings(schema, json.RawMessage(bad)); err == nil {
			t.Errorf("args %s: want an error", bad)
		}
	}
	if _, err := DropOptionalEmptyStrings(json.RawMessage(`{`), json.RawMessage(`{}`)); err == nil {
		t.Error("bad schema: want an error")
	}
}

func TestSchemaValidateEveryProblem(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"type":"object","required":["a","b"],"properties":{"a":{"type":"string","format":"date"},"c":{"type":"integer"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Validate(json.RawMessage(`{"a":"not a date","c":"x"}`))
	ae, ok := err.(*ArgumentError)
	if !ok || len(ae.Problems) != 3 {
		t.Fatalf("Validate = %v", err)
	}
	if err := s.Validate(json.RawMessage(`{"a":"2025-01-31","b":1}`)); err != nil {
		t.Fatalf("valid args rejected: %v", err)
	}
}
