package tools

import (
	"encoding/json"
	"fmt"
)

// Prepare readies a call's arguments for its handler or server: optional
// empty strings are dropped (DropOptionalEmptyStrings), then what is left is
// validated. The drop comes first because a model sends "" for an optional
// key it means to leave out, and a "format" on that key (a date-time "since")
// would otherwise refuse the call the drop was meant to fix. Arguments that
// are not a JSON object are validated as they are.
func (s *Schema) Prepare(args json.RawMessage) (json.RawMessage, error) {
	args = normalizeArgs(args)
	if dropped, err := DropOptionalEmptyStrings(s.raw, args); err == nil {
		args = dropped
	}
	if err := s.Validate(args); err != nil {
		return nil, err
	}
	return args, nil
}

// DropOptionalEmptyStrings prepares the arguments of a call: a key whose
// value is "" is removed when the schema declares it as an optional property
// (not in "required"), in the arguments object and in nested objects whose
// schema declares properties. A required "" is forwarded unchanged, and so is
// a "" under a key the schema does not declare.
//
// Models often send "" for an optional key they mean to leave out; remote
// servers then read it as a value. When nothing is dropped the arguments are
// returned byte for byte; otherwise they are re-encoded (numbers kept exact).
func DropOptionalEmptyStrings(schema json.RawMessage, args json.RawMessage) (json.RawMessage, error) {
	args = normalizeArgs(args)
	s, err := decodeJSON(schema)
	if err != nil {
		return nil, fmt.Errorf("schema: %w", err)
	}
	a, err := decodeJSON(args)
	if err != nil {
		return nil, fmt.Errorf("arguments: %w", err)
	}
	obj, ok := a.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments: want a JSON object, got %s", jsonKind(a))
	}
	if !dropEmpty(s, s, obj, 0) {
		return args, nil
	}
	return encodeJSON(obj)
}

// dropEmpty removes optional "" values from obj as described by schema and
// reports whether it removed anything.
func dropEmpty(root, schema any, obj map[string]any, depth int) bool {
	m, ok := schema.(map[string]any)
	if !ok || depth > 32 {
		return false
	}
	if ref, ok := m["$ref"].(string); ok && m["properties"] == nil {
		if depth > maxRefDepth*4 {
			return false
		}
		return dropEmpty(root, resolveRef(root, ref), obj, depth+1)
	}
	props, _ := m["properties"].(map[string]any)
	required := requiredSet(m)
	changed := false
	for k, v := range obj {
		ps, declared := props[k]
		if !declared {
			continue
		}
		switch val := v.(type) {
		case string:
			if val == "" && !required[k] {
				delete(obj, k)
				changed = true
			}
		case map[string]any:
			if dropEmpty(root, ps, val, depth+1) {
				changed = true
			}
		}
	}
	return changed
}
