package run

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/tools"
)

// A call whose server answered with a task (the MCP Tasks extension) is
// followed here, on durable timers: one timer per poll, then the
// tool_task_poll activity, until the task ends and its result is stored.
// No activity and no worker is held between polls (docs/adr/0625).

// tasksChange versions following tasks: its marker is recorded at the first
// task a run follows, so runs without one keep the history they had.
const tasksChange = "mcp-tasks"

// taskMaxWait is how long a run follows one task: past it the task is
// cancelled at its server and the call fails with a result that says so.
const taskMaxWait = 24 * time.Hour

// taskLost is the result of a call whose task could no longer be polled.
const taskLost = "the server runs this call as a task, which could no longer be followed (its server or login stopped answering); it was cancelled where the server allowed. Check its effect before calling it again"

// followTask polls the call's task until it ends (its result is then
// stored by the poll), the run is cancelled, or taskMaxWait passes; in the
// last two cases the task is cancelled at its server.
func (w *approvalWaits) followTask(ctx workflow.Context, in runact.ToolInput, task tools.RemoteTask) error {
	if workflow.GetVersion(ctx, tasksChange, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		// Never reached by a recorded history (no call answered with a
		// task before this change); the gate keeps the replay honest.
		return record(ctx, in, runs.OutcomeInterrupted, interrupted).Get(ctx, nil)
	}
	pctx := workflow.WithActivityOptions(ctx, taskPollOptions(in.Name))
	began := workflow.Now(ctx)
	until := began.Add(taskMaxWait)
	every := task.PollEvery
	for {
		wait := tools.TaskPollInterval(every, workflow.Now(ctx).Sub(began))
		if err := workflow.NewTimer(ctx, wait).Get(ctx, nil); err != nil {
			cancelTask(ctx, in, task)
			return err // the run was cancelled
		}
		var polled runact.TaskPolled
		err := workflow.ExecuteActivity(pctx, runact.TaskPollName, runact.TaskInput{ToolInput: in, Task: task}).Get(pctx, &polled)
		switch {
		case ctx.Err() != nil:
			cancelTask(ctx, in, task)
			return ctx.Err()
		case err != nil:
			cancelTask(ctx, in, task)
			return record(ctx, in, runs.OutcomeInterrupted, taskLost).Get(ctx, nil)
		case polled.Done:
			return nil
		case !workflow.Now(ctx).Before(until):
			cancelTask(ctx, in, task)
			return record(ctx, in, runs.OutcomeError,
				fmt.Sprintf("the server's task for this call did not finish within %s, so it was cancelled", humanDuration(taskMaxWait))).Get(ctx, nil)
		}
		every = time.Duration(polled.PollEvery)
	}
}

// cancelTask asks the task's server to cancel it, even when the run itself
// was cancelled; a failure is logged, since the run ends either way.
func cancelTask(ctx workflow.Context, in runact.ToolInput, task tools.RemoteTask) {
	dctx, _ := workflow.NewDisconnectedContext(ctx)
	dctx = workflow.WithActivityOptions(dctx, taskCancelOptions(in.Name))
	if err := workflow.ExecuteActivity(dctx, runact.TaskCancelName, runact.TaskInput{ToolInput: in, Task: task}).Get(dctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("could not cancel a call's task", "run_id", in.RunID, "seq", in.Seq, "error", err)
	}
}

func humanDuration(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%d days", int(d.Hours()/24))
	}
	return fmt.Sprintf("%d hours", int(d.Hours()))
}

// taskPollOptions: one tasks/get (and, for a 2025-11-25 server, one
// tasks/result) with the login's call timeout, then the call's bookkeeping.
// A poll asks and stores idempotently, so it retries; a task that cannot be
// polled after that is cancelled and the call recorded interrupted.
func taskPollOptions(tool string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		Summary:             "task of tool " + tool,
		StartToCloseTimeout: classTimeouts[tools.ClassMCP],
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    30 * time.Second,
			MaximumAttempts:    6, // about a minute of a server that does not answer
		},
	}
}

// taskCancelOptions: one tasks/cancel; a few tries, the run ends anyway.
func taskCancelOptions(tool string) workflow.ActivityOptions {
	return workflow.ActivityOptions{
		Summary:             "cancel the task of tool " + tool,
		StartToCloseTimeout: classTimeouts[tools.ClassMCP],
		RetryPolicy: &temporal.RetryPolicy{
			InitialInterval:    time.Second,
			BackoffCoefficient: 2,
			MaximumInterval:    10 * time.Second,
			MaximumAttempts:    3,
		},
	}
}
