package tools_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"

	"github.com/guilds/guilds/internal/tools"
)

func ExampleStamp() {
	red := tools.NewRedactor([]string{"sk-live-0123456789"}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	out := tools.Stamp(`{"token":"sk-live-0123456789","ok":true}`, tools.StampOptions{
		Redactor:  red,
		Remaining: 3,
	})
	fmt.Println(out)
	// Output:
	// {"token":"[REDACTED]","ok":true}
	//
	// Only 3 tool calls remain: wrap up and give your final answer.
	// remaining_tool_calls: 3
}

func ExampleShape() {
	schema := json.RawMessage(`{
	  "type": "object",
	  "required": ["query"],
	  "additionalProperties": false,
	  "properties": {
	    "query": {"type": "string"},
	    "since": {"type": "string", "format": "date-time", "description": "Oldest change"}
	  }
	}`)
	shaped, warnings, err := tools.Shape(schema)
	fmt.Println(string(shaped), warnings, err)
	// Output:
	// {"properties":{"query":{"type":"string"},"since":{"description":"Oldest change. Omit this key when unused.","type":"string"}},"required":["query"],"type":"object"} [] <nil>
}
