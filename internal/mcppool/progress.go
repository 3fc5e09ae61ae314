package mcppool

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// Progress receives a long-running call's progress: how far, out of how
// much (0 when the server does not say). The server's message is not passed
// on: it is the server's text, which may quote anything.
type Progress func(progress, total float64)

type progressKey struct{}

// WithProgress asks the server of a call made with ctx for progress
// notifications (a progressToken in the request's _meta) and hands each to fn.
func WithProgress(ctx context.Context, fn Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ProgressFrom is the Progress ctx carries, or nil.
func ProgressFrom(ctx context.Context) Progress {
	fn, _ := ctx.Value(progressKey{}).(Progress)
	return fn
}

// progressWatch routes a session's progress notifications to the calls
// waiting for them, by token.
type progressWatch struct {
	next atomic.Uint64
	mu   sync.Mutex
	fns  map[string]*progressListener
}

// progressListener is one call's Progress and the furthest step it was
// given: a step can arrive behind a later one (a handshake-era server may
// send some on the GET stream, some on the call's own), and progress only
// moves forward.
type progressListener struct {
	fn   Progress
	last float64
	seen bool
}

// watch registers ctx's Progress, if any, under a fresh token; done forgets it.
func (w *progressWatch) watch(ctx context.Context) (token string, done func()) {
	fn := ProgressFrom(ctx)
	if fn == nil {
		return "", func() {}
	}
	token = "guilds-" + strconv.FormatUint(w.next.Add(1), 10)
	w.mu.Lock()
	if w.fns == nil {
		w.fns = map[string]*progressListener{}
	}
	w.fns[token] = &progressListener{fn: fn}
	w.mu.Unlock()
	return token, func() {
		w.mu.Lock()
		delete(w.fns, token)
		w.mu.Unlock()
	}
}

func (w *progressWatch) notify(n mcp.JSONRPCNotification) {
	if n.Method != string(mcp.MethodNotificationProgress) {
		return
	}
	f := n.Params.AdditionalFields
	var token string
	switch t := f["progressToken"].(type) {
	case string:
		token = t
	default:
		return // tokens the pool sends are strings
	}
	progress, _ := f["progress"].(float64)
	total, _ := f["total"].(float64)
	w.mu.Lock()
	l := w.fns[token]
	if l == nil || (l.seen && progress <= l.last) {
		w.mu.Unlock()
		return
	}
	l.last, l.seen = progress, true
	defer w.mu.Unlock() // in order, whichever stream a step came on
	l.fn(progress, total)
}

// withProgressToken returns meta with token as its progressToken (a copy:
// meta may be shared).
func withProgressToken(meta *mcp.Meta, token string) *mcp.Meta {
	if token == "" {
		return meta
	}
	out := &mcp.Meta{ProgressToken: mcp.ProgressToken(token)}
	if meta != nil {
		out.AdditionalFields = meta.AdditionalFields
	}
	return out
}
