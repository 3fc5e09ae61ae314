package tools

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

// Check reports every problem of a document, null and scalars included, and
// nothing for one that conforms.
func TestSchemaCheck(t *testing.T) {
	s, err := CompileSchema(json.RawMessage(`{"type":"object","required":["temperature"],
	 "properties":{"temperature":{"type":"number"},"conditions":{"type":"string"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		doc  string
		want []string
	}{
		{`{"temperature":21.5,"conditions":"sunny"}`, nil},
		{`{"temperature":"warm"}`, []string{"at /temperature: got string, want number"}},
		{`{"conditions":3}`, []string{"at (root): missing property 'temperature'", "at /conditions: got number, want string"}},
		{`null`, []string{"at (root): got null, want object"}},
		{`{`, []string{"the document is not valid JSON"}},
	} {
		got := s.Check(json.RawMessage(c.doc))
		if len(got) == 0 && len(c.want) == 0 {
			continue
		}
		if !reflect.DeepEqual(got, sorted(c.want)) {
			t.Errorf("Check(%s) = %q, want %q", c.doc, got, c.want)
		}
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
