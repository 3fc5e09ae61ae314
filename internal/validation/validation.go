// Package validation collects every problem with an input so that a request is
// rejected once, listing them all, instead of one problem per attempt.
package validation

import (
	"fmt"
	"strings"
)

// Problem is one reason an input is refused.
type Problem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// Error is a rejected input; the API maps it to 422.
type Error struct {
	Problems []Problem
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		if p.Field == "" {
			parts[i] = p.Message
		} else {
			parts[i] = p.Field + ": " + p.Message
		}
	}
	return strings.Join(parts, "; ")
}

// Problems accumulates problems; its zero value is ready to use.
type Problems struct {
	list []Problem
}

// Add records a problem with a field.
func (p *Problems) Add(field, format string, args ...any) {
	p.list = append(p.list, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Check records a problem when ok is false.
func (p *Problems) Check(ok bool, field, format string, args ...any) {
	if !ok {
		p.Add(field, format, args...)
	}
}

// Err is nil when nothing was recorded, else an *Error holding every problem.
func (p *Problems) Err() error {
	if len(p.list) == 0 {
		return nil
	}
	return &Error{Problems: append([]Problem(nil), p.list...)}
}
