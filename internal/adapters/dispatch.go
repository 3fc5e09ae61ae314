package adapters

import (
	"context"
	"encoding/json"
	"fmt"
)

// ToolOf finds a tool's handler in an adapter's table; an unknown tool is
// "<adapter> has no tool …".
func ToolOf[H any](adapter string, table map[string]H, tool string) (H, error) {
	h, ok := table[tool]
	if !ok {
		return h, fmt.Errorf("%s has no tool %q", adapter, tool)
	}
	return h, nil
}

// Dispatch finds a tool's handler (ToolOf) and decodes the call's arguments
// into A: absent or null arguments are the zero A, arguments that do not
// decode are "<tool>: bad arguments: …".
func Dispatch[H, A any](adapter string, table map[string]H, tool string, raw json.RawMessage) (H, A, error) {
	var in A
	h, err := ToolOf(adapter, table, tool)
	if err != nil {
		return h, in, err
	}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &in); err != nil {
			return h, in, fmt.Errorf("%s: bad arguments: %w", tool, err)
		}
	}
	return h, in, nil
}

// Rejection is ErrRejected for a 401 or 403 answer (Rejected), else err as
// it is: what an adapter's Check answers.
func Rejection(err error) error {
	if err != nil && Rejected(err) {
		return ErrRejected
	}
	return err
}

// Handlers is an adapter's tool table whose handlers take the decoded
// arguments A and nothing else.
type Handlers[A any] map[string]func(ctx context.Context, c Conn, in A) (string, error)

// Call runs a tool of the table with its decoded arguments (Dispatch).
func (t Handlers[A]) Call(ctx context.Context, c Conn, adapter, tool string, raw json.RawMessage) (string, error) {
	h, in, err := Dispatch[func(context.Context, Conn, A) (string, error), A](adapter, t, tool, raw)
	if err != nil {
		return "", err
	}
	return h(ctx, c, in)
}
