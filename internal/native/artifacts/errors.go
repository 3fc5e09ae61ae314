package artifacts

import (
	"fmt"

	"github.com/guilds/guilds/internal/validation"
)

// Error is a refusal of a native tool family with the HTTP status the
// operator API answers. As a tool result it reads "ERROR: <status> <message>",
// so the model sees the same code an operator would.
type Error struct {
	Status  int
	Message string
	// Problems name the fields of a refused input (the operator API lists
	// them; the model reads Message).
	Problems []validation.Problem
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Message) }

// Errorf builds an *Error.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}

// OnField builds a 422 about one input field.
func OnField(field, format string, args ...any) *Error {
	msg := fmt.Sprintf(format, args...)
	return &Error{Status: 422, Message: msg, Problems: []validation.Problem{{Field: field, Message: msg}}}
}
