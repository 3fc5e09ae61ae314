package run

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/tools"
)

// A task that never ends is cancelled at its server after taskMaxWait, and
// the call's result says so; the day of polling is skipped, not waited.
func TestTaskOutlivingItsWaitIsCancelled(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	polls, cancelled := 0, 0
	var recorded runact.RecordInput
	env.RegisterActivityWithOptions(func(context.Context, runact.TaskInput) (runact.TaskPolled, error) {
		polls++
		return runact.TaskPolled{Status: tools.TaskWorking, PollEvery: int64(time.Second)}, nil
	}, activity.RegisterOptions{Name: runact.TaskPollName})
	env.RegisterActivityWithOptions(func(context.Context, runact.TaskInput) error {
		cancelled++
		return nil
	}, activity.RegisterOptions{Name: runact.TaskCancelName})
	env.RegisterActivityWithOptions(func(_ context.Context, in runact.RecordInput) (runact.ToolOutput, error) {
		recorded = in
		return runact.ToolOutput{Seq: in.Seq, Result: tools.ErrorResult(in.Message), Outcome: in.Outcome}, nil
	}, activity.RegisterOptions{Name: runact.ToolRecordName})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		return newApprovalWaits(ctx).followTask(ctx, runact.ToolInput{RunID: "r1", Seq: 3, Name: "jobs_slow_compute"},
			tools.RemoteTask{ConnectionID: "c1", TaskID: "t1"})
	}, workflow.RegisterOptions{Name: "follow"})
	env.ExecuteWorkflow("follow")
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if cancelled != 1 {
		t.Errorf("tasks/cancel sent %d times, want 1", cancelled)
	}
	if recorded.Outcome != runs.OutcomeError || !strings.Contains(recorded.Message, "did not finish within 24 hours") {
		t.Errorf("recorded %+v", recorded)
	}
	if polls < 100 || polls > 600 {
		t.Errorf("%d polls over a day at the server's 1 s", polls)
	}
}

// A task that can no longer be polled is cancelled where the server allows,
// and the call is recorded interrupted: it may have had effects.
func TestTaskThatCannotBePolledIsInterrupted(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	polls, cancelled := 0, 0
	var recorded runact.RecordInput
	env.RegisterActivityWithOptions(func(context.Context, runact.TaskInput) (runact.TaskPolled, error) {
		polls++
		return runact.TaskPolled{}, errors.New("poll the task: jobs: tasks/get did not answer within 90s")
	}, activity.RegisterOptions{Name: runact.TaskPollName})
	env.RegisterActivityWithOptions(func(context.Context, runact.TaskInput) error {
		cancelled++
		return nil
	}, activity.RegisterOptions{Name: runact.TaskCancelName})
	env.RegisterActivityWithOptions(func(_ context.Context, in runact.RecordInput) (runact.ToolOutput, error) {
		recorded = in
		return runact.ToolOutput{Seq: in.Seq, Result: tools.ErrorResult(in.Message), Outcome: in.Outcome}, nil
	}, activity.RegisterOptions{Name: runact.ToolRecordName})
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context) error {
		return newApprovalWaits(ctx).followTask(ctx, runact.ToolInput{RunID: "r1", Seq: 3, Name: "jobs_slow_compute"},
			tools.RemoteTask{ConnectionID: "c1", TaskID: "t1"})
	}, workflow.RegisterOptions{Name: "follow"})
	env.ExecuteWorkflow("follow")
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if polls != int(taskPollOptions("x").RetryPolicy.MaximumAttempts) || cancelled != 1 {
		t.Errorf("%d polls, %d cancels", polls, cancelled)
	}
	if recorded.Outcome != runs.OutcomeInterrupted || recorded.Message != taskLost {
		t.Errorf("recorded %+v", recorded)
	}
}
