package main

import "encoding/json"

// argsFor builds arguments for a tool from its input schema: a value for
// every required property (numbers 2 and 3 in turn, "test", true, empty
// objects and arrays), none for optional ones.
func argsFor(schema json.RawMessage) json.RawMessage {
	var s struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	_ = json.Unmarshal(schema, &s)
	args := map[string]any{}
	n := 2
	for _, name := range s.Required {
		typ, _ := s.Properties[name].Type.(string)
		switch typ {
		case "number", "integer":
			args[name] = n
			n++
		case "boolean":
			args[name] = true
		case "object":
			args[name] = map[string]any{}
		case "array":
			args[name] = []any{}
		default:
			args[name] = "test"
		}
	}
	out, _ := json.Marshal(args)
	return out
}
