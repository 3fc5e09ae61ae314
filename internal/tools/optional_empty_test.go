package tools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// since is optional with a format, at is required with one, q is a required
// plain string: the shape of a search tool's arguments.
const sinceSchema = `{"type":"object","required":["q"],"additionalProperties":false,
 "properties":{"q":{"type":"string"},"since":{"type":"string","format":"date-time"},
  "window":{"type":"object","required":["at"],"properties":{"at":{"type":"string","format":"date-time"},"until":{"type":"string","format":"date-time"}}}}}`

// An optional "" is dropped before the arguments are validated, so a format
// on that property cannot refuse it; a required "" is still validated as sent.
func TestOptionalEmptyStringIsDroppedBeforeValidation(t *testing.T) {
	var got json.RawMessage
	r := NewRegistry(WithLogger(quietLog))
	r.Register(Tool{Name: "search", Schema: json.RawMessage(sinceSchema),
		Handler: func(_ context.Context, c Call) (string, error) { got = c.Args; return "ok", nil }})
	s, err := CompileSchema(json.RawMessage(sinceSchema)) // an MCP tool's schema, not in the registry
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, args, want, refused string
	}{
		{"optional date-time empty", `{"q":"x","since":""}`, `{"q":"x"}`, ""},
		{"nested optional empty", `{"q":"x","window":{"at":"2025-01-01T00:00:00Z","until":""}}`, `{"q":"x","window":{"at":"2025-01-01T00:00:00Z"}}`, ""},
		{"required plain empty forwarded", `{"q":""}`, `{"q":""}`, ""},
		{"required date-time empty refused", `{"q":"x","window":{"at":""}}`, "", "/window/at"},
		{"optional bad date-time refused", `{"q":"x","since":"yesterday"}`, "", "/since"},
		{"nothing to drop, bytes kept", `{ "q" : "x" }`, `{ "q" : "x" }`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name+"/native", func(t *testing.T) {
			got = nil
			out := r.Invoke(context.Background(), Call{Name: "search", Args: json.RawMessage(tt.args)})
			if tt.refused != "" {
				if !strings.HasPrefix(out, "ERROR: invalid arguments") || !strings.Contains(out, tt.refused) || got != nil {
					t.Fatalf("want a refusal at %s, got %q (handler saw %s)", tt.refused, out, got)
				}
				return
			}
			if out != "ok" || string(got) != tt.want {
				t.Fatalf("result %q, handler got %s, want %s", out, got, tt.want)
			}
		})
		t.Run(tt.name+"/mcp", func(t *testing.T) {
			args, err := s.Prepare(json.RawMessage(tt.args))
			if tt.refused != "" {
				if err == nil || !strings.Contains(err.Error(), tt.refused) {
					t.Fatalf("want a refusal at %s, got %s, %v", tt.refused, args, err)
				}
				return
			}
			if err != nil || string(args) != tt.want {
				t.Fatalf("Prepare = %s, %v; want %s", args, err, tt.want)
			}
		})
	}
}
