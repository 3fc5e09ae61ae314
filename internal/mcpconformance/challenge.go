package mcpconformance

import (
	"net/http"
	"strings"
	"sync"

	"github.com/guilds/guilds/internal/mcpoauth"
)

// Challenge is the last authentication challenge an MCP server answered with.
type Challenge struct {
	Status int // 401 or 403; 0 when none was seen
	mcpoauth.Challenge
	// InsufficientScope: the server asked for more scopes (RFC 6750 §3.1).
	InsufficientScope bool
}

// Recorder is an http.RoundTripper that remembers the last 401 or 403
// challenge of the MCP server, which mcp-go reports only as an error value.
type Recorder struct {
	Next http.RoundTripper // nil: http.DefaultTransport

	mu   sync.Mutex
	last Challenge
}

// RoundTrip implements http.RoundTripper.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	next := r.Next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(req)
	if err == nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
		values := resp.Header.Values("WWW-Authenticate")
		c := Challenge{Status: resp.StatusCode, Challenge: mcpoauth.ParseChallenge(values)}
		for _, v := range values {
			if strings.Contains(v, "insufficient_scope") {
				c.InsufficientScope = true
			}
		}
		r.mu.Lock()
		r.last = c
		r.mu.Unlock()
	}
	return resp, err
}

// Take returns the last challenge and forgets it.
func (r *Recorder) Take() Challenge {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.last
	r.last = Challenge{}
	return c
}
