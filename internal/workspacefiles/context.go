package workspacefiles

import (
	"context"
	"sync/atomic"

	"github.com/guilds/guilds/sandbox"
)

// The workspace reaches a service's tool through the call's context: the
// worker names its workspaces once (Use), and the tool activity names the
// run's agent on each remote call (WithAgent). An adapter reads both with
// From, so no adapter signature carries them.

var process atomic.Pointer[Workspace]

// Use names the process's agent workspaces (the worker's manager); the API
// server has none. nil forgets them.
func Use(ws Workspace) {
	if ws == nil {
		process.Store(nil)
		return
	}
	process.Store(&ws)
}

type agentKey struct{}

// WithAgent marks ctx as a call made for agentID's run.
func WithAgent(ctx context.Context, agentID string) context.Context {
	return context.WithValue(ctx, agentKey{}, agentID)
}

// From returns the workspace and the agent of a call, or sandbox.ErrNoWorkspace.
func From(ctx context.Context) (Workspace, string, error) {
	agent, _ := ctx.Value(agentKey{}).(string)
	ws := process.Load()
	if ws == nil || agent == "" {
		return nil, "", sandbox.ErrNoWorkspace
	}
	return *ws, agent, nil
}
