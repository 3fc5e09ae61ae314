package artifacts

import "fmt"

// Error is a refusal of a native tool family with the HTTP status the
// operator API answers. As a tool result it reads "ERROR: <status> <message>",
// so the model sees the same code an operator would.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Message) }

// Errorf builds an *Error.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Message: fmt.Sprintf(format, args...)}
}
