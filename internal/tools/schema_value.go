package tools

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Check validates a JSON document that is not a call's arguments (a tool's
// structured result against its output schema) and returns every problem
// found, sorted, or nil when it conforms. Unlike Validate, no bytes and JSON
// null are checked as they are.
func (s *Schema) Check(doc json.RawMessage) []string {
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return []string{"the document is not valid JSON"}
	}
	err = s.compiled.Validate(inst)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{oneLine(err.Error())}
	}
	return problems(ve)
}
