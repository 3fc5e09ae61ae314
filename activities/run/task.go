package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/remote"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/tools"
)

// Activity names of a call the server runs as a task (docs/adr/0625).
const (
	TaskPollName   = "tool_task_poll"
	TaskCancelName = "tool_task_cancel"
)

// TaskInput names a call and the task its server runs for it.
type TaskInput struct {
	ToolInput
	Task tools.RemoteTask `json:"task"`
}

// TaskPolled is how the task stood at one poll. Done: it ended, and Result
// is the call's stored result; otherwise Status and PollEvery (what the
// server asked for, 0 for nothing) say when to ask again.
type TaskPolled struct {
	Done bool `json:"done,omitempty"`
	ToolOutput
	Status string `json:"status,omitempty"`
	// PollEvery is in nanoseconds, as time.Duration encodes.
	PollEvery int64 `json:"poll_every,omitempty"`
	// Answered counts input requests the poll answered (declined).
	Answered int `json:"answered,omitempty"`
}

// TaskPoll asks the server how the call's task stands. Once it ended, its
// result goes through the one result pipeline (internal/remote: stamped
// with the run's redaction set, images and apps kept) and is stored as the
// call's, as the tool activity stores a call's; a poll after that returns
// the stored result. A failed poll is an error, retried by its options.
func (a *Activities) TaskPoll(ctx context.Context, in TaskInput) (TaskPolled, error) {
	r, snap, prev, err := a.begin(ctx, in.ToolInput)
	if err != nil || prev != nil {
		if prev != nil {
			return TaskPolled{Done: true, ToolOutput: *prev}, nil
		}
		return TaskPolled{}, err
	}
	offered, ok := snap.Tool(in.Name)
	if !ok || offered.ConnectionID != in.Task.ConnectionID {
		return TaskPolled{}, fmt.Errorf("the task of call %d does not belong to its tool's login", in.Seq)
	}
	_, hidden, err := a.revealArguments(ctx, in.ToolInput)
	if err != nil {
		return TaskPolled{}, err
	}
	red, err := a.redactor(ctx, r.AgentID, hidden...)
	if err != nil {
		return TaskPolled{}, err
	}
	callers, t, opts := a.remoteCall(ctx, r, in.Seq, offered, in.Remaining, red)
	// A form the task asks for goes to the inbox, as a call's own would.
	ctx = inputs.WithAsker(ctx, a.askerFor(r, in.Seq, offered))
	stamped, st, done, err := remote.PollTask(ctx, callers, t, in.Task.TaskID, opts)
	if err != nil {
		return TaskPolled{}, errors.New(red.Redact("poll the task: " + err.Error()))
	}
	if !done {
		if err := runs.NoteTaskStatus(ctx, a.d.DB, in.RunID, in.Seq, st.Status); err != nil {
			return TaskPolled{}, err
		}
		return TaskPolled{Status: st.Status, PollEvery: int64(st.PollEvery), Answered: st.Answered}, nil
	}
	meta := map[string]any{"kind": offered.Kind, "class": offered.Class, "server": offered.ServerSlug, "task": st.Status}
	out, err := a.saveCall(ctx, r, in.ToolInput, offered, red, stamped, outcomeOf(stamped), meta, in.Task.Started, hidden)
	if err != nil {
		return TaskPolled{}, err
	}
	if err := runs.NoteTaskStatus(ctx, a.d.DB, in.RunID, in.Seq, st.Status); err != nil {
		return TaskPolled{}, err
	}
	// The result is stored, so the task no longer counts as waited for.
	return TaskPolled{Done: true, ToolOutput: out, Status: st.Status}, a.resumeIfNoneWaits(ctx, in.RunID)
}

// TaskCancel asks the server to cancel the call's task: the run was
// cancelled, or the task outlived its wait. The call's result is the
// workflow's to record.
func (a *Activities) TaskCancel(ctx context.Context, in TaskInput) error {
	err := remote.CancelTask(ctx, remote.Callers{MCP: a.d.MCP, Adapters: a.d.Adapters},
		remote.Tool{Kind: catalog.KindRemote, ConnectionID: in.Task.ConnectionID}, in.Task.TaskID)
	if err != nil {
		r, lerr := runs.Load(ctx, a.d.DB, in.RunID)
		if lerr != nil {
			return errors.New("cancel the task: the run could not be read")
		}
		red, rerr := a.redactor(ctx, r.AgentID)
		if rerr != nil {
			return errors.New("cancel the task: the run's redaction set could not be read")
		}
		return errors.New(red.Redact("cancel the task: " + err.Error()))
	}
	a.d.Log.InfoContext(ctx, "task cancelled", "run_id", in.RunID, "seq", in.Seq, "tool", in.Name)
	return nil
}
