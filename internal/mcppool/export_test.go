package mcppool

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
