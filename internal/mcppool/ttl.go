package mcppool

import "time"

// MaxListTTL bounds how long a server's ttlMs hint keeps a stored listing
// fresh: past it, a run start lists again whatever the server said.
const MaxListTTL = time.Hour

// listHint is the caching hint (SEP-2549 ttlMs) of a listing, when the
// server gave one: the shortest of its pages.
type listHint struct {
	ttl time.Duration
	set bool
}

func (h listHint) with(ms int64, ok bool) listHint {
	if !ok {
		return h
	}
	d := min(max(time.Duration(ms)*time.Millisecond, 0), MaxListTTL)
	if !h.set || d < h.ttl {
		return listHint{ttl: d, set: true}
	}
	return h
}

// noteHint remembers the hint of a connection's last listing in this process.
func (p *Pool) noteHint(connectionID string, h listHint) {
	if h.set {
		p.hints.Store(connectionID, h.ttl)
		return
	}
	p.hints.Delete(connectionID)
}

// freshFor is how long a stored listing stays fresh: the server's hint
// when its last listing here gave one (0: list at every run start), else
// the caller's maxAge.
func (p *Pool) freshFor(connectionID string, maxAge time.Duration) time.Duration {
	if v, ok := p.hints.Load(connectionID); ok {
		return v.(time.Duration)
	}
	return maxAge
}
