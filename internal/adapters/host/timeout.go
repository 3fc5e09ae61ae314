package host

import (
	"fmt"
	"time"
)

// TimeoutError is an adapter call the host gave up on at its own timeout
// (not the caller's deadline): the service did not answer within After.
type TimeoutError struct {
	Server string // the catalog slug
	After  time.Duration
}

func (e *TimeoutError) Error() string {
	after := e.After.String()
	if e.After >= time.Second && e.After%time.Second == 0 {
		after = fmt.Sprintf("%ds", e.After/time.Second) // 90s, not 1m30s
	}
	return fmt.Sprintf("%s: HTTP request did not answer within %s", e.Server, after)
}
