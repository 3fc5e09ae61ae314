package sandbox

import (
	"context"
	"errors"
	"io/fs"
)

// Workspace is an agent's long-lived sandbox as the tools see it, addressed
// by the agent's id (internal/workspaces.Manager on the worker): run a
// command, write a file through the file API. Every tool that runs in the
// sandbox takes this one interface.
type Workspace interface {
	Exec(ctx context.Context, agentID string, req ExecRequest) (ExecResult, error)
	CopyTo(ctx context.Context, agentID, path string, content []byte, mode fs.FileMode) error
}

// ErrNoWorkspace is the failure of a call that needs an agent's sandbox in a
// process, or a call, that has none: every process declares the tools (for
// offers and views), only the worker runs them, during an agent's run. It is
// the one identity of that failure; a tool that says more wraps it.
var ErrNoWorkspace = errors.New("this call has no agent workspace: tools that use an agent's sandbox run on the worker, during the agent's run")
