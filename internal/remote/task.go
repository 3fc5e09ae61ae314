package remote

import (
	"context"
	"errors"
	"log/slog"

	"github.com/guilds/guilds/internal/tools"
)

// A server may answer a call with a task (the MCP Tasks extension): the
// caller that can wait durably (a run) received it through
// tools.HandOverTask and follows it here; its result, once the task ended,
// takes the same pipeline as a call's (docs/adr/0625).

// TaskCaller follows the tasks a server created for calls (mcppool.Pool).
type TaskCaller interface {
	PollTask(ctx context.Context, connectionID, taskID string) (tools.TaskState, error)
	CancelTask(ctx context.Context, connectionID, taskID string) error
}

// ErrNoTasks refuses to follow a task where the login's caller cannot.
var ErrNoTasks = errors.New("tasks of this login cannot be followed on this worker")

// PollTask asks how the task of t stands. While it runs, done is false and
// the state says when to ask again. Once it ended, stamped is its result
// through the pipeline (tools.Stamp with opt's redaction set, images and
// apps kept as opt says), exactly as Call gives a call's: a failed or
// cancelled task reads as an "ERROR: " result. An error is the pool's
// (already redacted of the values it used): the poll did not happen.
func PollTask(ctx context.Context, callers Callers, t Tool, taskID string, opt Options) (stamped string, st tools.TaskState, done bool, err error) {
	pool := callers.For(t.Kind)
	tc, ok := pool.(TaskCaller)
	switch {
	case opt.Redactor == nil:
		return "", st, false, ErrNoRedactor
	case !ok:
		return "", st, false, ErrNoTasks
	}
	log := opt.Log
	if log == nil {
		log = slog.Default()
	}
	st, err = tc.PollTask(ctx, t.ConnectionID, taskID)
	if err != nil {
		log.WarnContext(ctx, "task poll failed", "connection_id", t.ConnectionID, "remote_tool", t.RemoteName)
		return "", st, false, err
	}
	parts, done := st.Outcome()
	if !done {
		return "", st, false, nil
	}
	text := partsText(ctx, pool, t, parts, opt, log)
	return tools.Stamp(text, tools.StampOptions{Redactor: opt.Redactor, Remaining: opt.Remaining, NoTrailer: opt.NoTrailer, Log: log}), st, true, nil
}

// CancelTask asks the server of t to cancel its task.
func CancelTask(ctx context.Context, callers Callers, t Tool, taskID string) error {
	tc, ok := callers.For(t.Kind).(TaskCaller)
	if !ok {
		return ErrNoTasks
	}
	return tc.CancelTask(ctx, t.ConnectionID, taskID)
}
