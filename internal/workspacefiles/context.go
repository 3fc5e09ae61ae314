package workspacefiles

import (
	"context"

	"github.com/guilds/guilds/sandbox"
)

// The workspace reaches a service's tool through the call's context: the
// tool activity, which the worker builds with its agent workspaces, names
// them and the run's agent on each remote call (With). An adapter reads
// both with From, so no adapter signature carries them, and no process
// holds them in a global.

type callKey struct{}

type call struct {
	ws      Workspace
	agentID string
}

// With marks ctx as a call made for agentID's run, whose files are in ws
// (nil: the process has no agent workspaces).
func With(ctx context.Context, ws Workspace, agentID string) context.Context {
	return context.WithValue(ctx, callKey{}, call{ws: ws, agentID: agentID})
}

// From returns the workspace and the agent of a call, or
// sandbox.ErrNoWorkspace.
func From(ctx context.Context) (Workspace, string, error) {
	c, _ := ctx.Value(callKey{}).(call)
	if c.ws == nil || c.agentID == "" {
		return nil, "", sandbox.ErrNoWorkspace
	}
	return c.ws, c.agentID, nil
}
