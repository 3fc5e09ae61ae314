package connectors

import (
	"context"
	"sync"
)

// Used collects the secret values of every credential the resolver served
// while one call ran: the token it started with and any token a refresh
// (after a 401, or near expiry) produced on the way. A redaction set built
// before the call cannot know the refreshed token; this one does, because it
// is fed at injection time (docs/adr/0204-redact-what-the-call-used.md).
type Used struct {
	mu   sync.Mutex
	last *entry
	seen map[string]bool
	vals []string
}

type usedKey struct{}

// WithUsed returns a context whose credential lookups are recorded in the
// returned Used. Nested calls share the outermost collector.
func WithUsed(ctx context.Context) (context.Context, *Used) {
	if u, ok := ctx.Value(usedKey{}).(*Used); ok {
		return ctx, u
	}
	u := &Used{seen: map[string]bool{}}
	return context.WithValue(ctx, usedKey{}, u), u
}

// UsedFrom returns the collector ctx carries, or nil.
func UsedFrom(ctx context.Context) *Used {
	u, _ := ctx.Value(usedKey{}).(*Used)
	return u
}

// Values returns the secret values served so far (a copy).
func (u *Used) Values() []string {
	if u == nil {
		return nil
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.vals...)
}

// Add records values the caller injected itself.
func (u *Used) Add(vals ...string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.addLocked(vals)
}

func (u *Used) addLocked(vals []string) {
	for _, v := range vals {
		if v != "" && !u.seen[v] {
			u.seen[v] = true
			u.vals = append(u.vals, v)
		}
	}
}

// noteUsed records e's secrets when ctx carries a collector. Without one it
// costs one context lookup and no allocation.
func noteUsed(ctx context.Context, e *entry) {
	u, ok := ctx.Value(usedKey{}).(*Used)
	if !ok || e == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.last == e {
		return
	}
	u.last = e
	u.addLocked(e.secrets)
}
