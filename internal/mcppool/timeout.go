package mcppool

import (
	"fmt"
	"time"
)

// TimeoutError is a request the pool gave up on at its own timeout (not the
// caller's deadline): the server or service did not answer within After. The
// session stays open; the next request on it is unaffected.
type TimeoutError struct {
	Server string // the catalog slug, or "the MCP server"
	Op     string // "tools/call", "tools/list" or "HTTP request"
	After  time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s: %s did not answer within %s", e.Server, e.Op, e.bound())
}

func (e *TimeoutError) bound() string {
	if e.After >= time.Second && e.After%time.Second == 0 {
		return fmt.Sprintf("%ds", e.After/time.Second) // 90s, not 1m30s
	}
	return e.After.String()
}
