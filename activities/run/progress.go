package run

import (
	"context"
	"sync"

	"go.temporal.io/sdk/activity"

	"github.com/guilds/guilds/internal/mcppool"
)

// CallProgress is the last progress a long remote call reported. The tool
// activity's heartbeats carry it, so the Temporal UI shows how far the call
// is on the pending activity. Numbers only: a server's progress message is
// its own text and may quote anything.
type CallProgress struct {
	Progress float64 `json:"progress"`
	Total    float64 `json:"total,omitempty"`
}

// progressNote holds a call's last progress for its heartbeats.
type progressNote struct {
	mu   sync.Mutex
	last *CallProgress
}

func (n *progressNote) set(progress, total float64) {
	n.mu.Lock()
	n.last = &CallProgress{Progress: progress, Total: total}
	n.mu.Unlock()
}

// details are a heartbeat's details: the last progress, if any.
func (n *progressNote) details() []any {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.last == nil {
		return nil
	}
	return []any{*n.last}
}

// watchProgress heartbeats for a tool call, and asks its remote server for
// progress (mcppool.WithProgress): each step heartbeats at once with it, and
// the periodic heartbeats repeat the last one.
func (a *Activities) watchProgress(ctx context.Context) (context.Context, func()) {
	if !activity.IsActivity(ctx) {
		return ctx, func() {}
	}
	note := &progressNote{}
	stop := a.heartbeatWith(ctx, note)
	return mcppool.WithProgress(ctx, func(progress, total float64) {
		note.set(progress, total)
		activity.RecordHeartbeat(ctx, note.details()...)
	}), stop
}
