package records

import (
	"encoding/json"
	"strings"
)

func prefixed(prefix, cols string) string {
	parts := strings.Split(cols, ", ")
	for i, p := range parts {
		parts[i] = prefix + p
	}
	return strings.Join(parts, ", ")
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
