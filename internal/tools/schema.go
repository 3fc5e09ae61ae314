package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// Schema is a compiled JSON Schema of a tool's arguments. Native tools get one
// at Register; MCP tools, which are not in the registry, get one from
// CompileSchema at run start. It is safe for concurrent use.
type Schema struct {
	raw      json.RawMessage
	compiled *jsonschema.Schema
}

// schemaURL is the name the compiler gives the document; it never leaves the process.
const schemaURL = "mem:///arguments.json"

// noLoader refuses every external reference. Schemas of remote tools are
// untrusted input: a "$ref" must never make the orchestrator read a file or
// open a connection. Meta-schemas are built into the compiler and still load.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external $ref %q is not allowed", url)
}

// CompileSchema compiles raw, a JSON Schema of tool arguments. External
// references are refused. Formats are asserted whatever the draft, so a
// handler can rely on a "format" its schema declares.
func CompileSchema(raw json.RawMessage) (*Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("schema is not JSON: %w", err)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.AssertFormat()
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	compiled, err := c.Compile(schemaURL)
	if err != nil {
		msg := strings.ReplaceAll(err.Error(), schemaURL, "schema")
		return nil, fmt.Errorf("invalid schema: %s", oneLine(msg))
	}
	return &Schema{raw: bytes.Clone(raw), compiled: compiled}, nil
}

// Raw returns the schema as it was compiled. The caller must not modify it.
func (s *Schema) Raw() json.RawMessage { return s.raw }

// ArgumentError lists every problem found in a call's arguments.
type ArgumentError struct {
	Problems []string
}

func (e *ArgumentError) Error() string {
	return "invalid arguments: " + strings.Join(e.Problems, "; ")
}

// Validate checks args against the schema and returns nil or an
// *ArgumentError holding every problem at once. Empty args (no bytes, or
// JSON null) are checked as the empty object, which is what a model means
// when it sends nothing for a tool without required arguments.
func (s *Schema) Validate(args json.RawMessage) error {
	args = normalizeArgs(args)
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(args))
	if err != nil {
		return &ArgumentError{Problems: []string{"arguments are not valid JSON"}}
	}
	err = s.compiled.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return &ArgumentError{Problems: []string{err.Error()}}
	}
	return &ArgumentError{Problems: problems(ve)}
}

// normalizeArgs maps "no arguments" to the empty object.
func normalizeArgs(args json.RawMessage) json.RawMessage {
	t := bytes.TrimSpace(args)
	if len(t) == 0 || string(t) == "null" {
		return json.RawMessage("{}")
	}
	return args
}

// problems flattens a validation error into one line per failed keyword,
// sorted (the validator's order depends on map iteration), without duplicates.
func problems(ve *jsonschema.ValidationError) []string {
	out := ve.BasicOutput()
	var list []string
	seen := map[string]bool{}
	for _, u := range out.Errors {
		if u.Error == nil {
			continue
		}
		switch u.Error.Kind.(type) {
		case *kind.Schema, *kind.Group, *kind.Reference, *kind.AllOf:
			continue // containers; their causes are listed on their own
		}
		loc := u.InstanceLocation
		if loc == "" {
			loc = "(root)"
		}
		p := "at " + loc + ": " + u.Error.String()
		if !seen[p] {
			seen[p] = true
			list = append(list, p)
		}
	}
	if len(list) == 0 {
		list = append(list, oneLine(ve.Error()))
	}
	sort.Strings(list)
	return list
}

// oneLine joins a multi-line message into one line.
func oneLine(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	return strings.Join(lines, " ")
}
