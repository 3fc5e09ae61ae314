package mcppool

import (
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// OnHeard has fn told of every login id the pool hears on connstore.Channel,
// after it dropped that login's kept row.
func OnHeard(p *Pool, fn func(id string)) { p.logins.heard.Store(&fn) }

// Listening reports whether the pool hears connstore.Channel (and so keeps
// the rows it reads).
func Listening(p *Pool) bool {
	p.logins.mu.RLock()
	defer p.logins.mu.RUnlock()
	return p.logins.up
}

// Listens counts the times the pool started listening (1 + reconnections).
func Listens(p *Pool) int64 { return p.logins.listens.Load() }

// Declaring is what the pool's sessions declare of themselves to a server of
// the 2026-07-28 wire whose capabilities.extensions is advertised: its client
// info, and the client options and extensions behind its capabilities (that
// wire repeats them in every request's _meta). A benchmark's bare client takes
// them to send the same requests.
func Declaring(advertised map[string]any) (mcp.Implementation, []client.ClientOption, map[string]any) {
	ext := declarations()
	keepAdvertised(ext, advertised)
	return mcp.Implementation{Name: "guilds", Version: "1"}, declining, ext
}
