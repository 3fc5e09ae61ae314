// Package schedule runs an agent's schedules on Temporal. A cron schedule is
// a Temporal Schedule (id guilds-schedule-<id>) whose action starts the
// ScheduledRun workflow; a daily window is one Window workflow per schedule
// (id guilds-window-<id>) that sleeps to random wake-ups and starts a
// ScheduledRun at each. ScheduledRun creates the schedule-triggered run (an
// activity, once per firing) and runs the run workflow as its child, so the
// Schedule's overlap policy (skip) sees the firing as running until the run
// ends. The Manager keeps Temporal in step with the schedules table.
package schedule

import (
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	schedact "github.com/guilds/guilds/activities/schedule"
	"github.com/guilds/guilds/internal/runs"
	runwf "github.com/guilds/guilds/workflows/run"
)

// Registered workflow names; they never change with Go renames.
const (
	ScheduledRunName = "scheduled_run"
	WindowName       = "schedule_window"
)

// Temporal ids of a schedule's parts.
func ScheduleID(id string) string       { return "guilds-schedule-" + id }
func WindowWorkflowID(id string) string { return "guilds-window-" + id }

// firingID is the workflow id of a window's wake-up (also its firing key).
func firingID(id string, due time.Time) string {
	return fmt.Sprintf("guilds-window-%s-%d", id, due.Unix())
}

// saScheduledStart is set by Temporal on a workflow a Schedule starts: the
// time the action was due.
var saScheduledStart = temporal.NewSearchAttributeKeyTime("TemporalScheduledStartTime")

// ScheduledRunParams is the input of a firing.
type ScheduledRunParams struct {
	ScheduleID string `json:"schedule_id"`
	// Due is the wake-up time; a Schedule's firing takes it from
	// TemporalScheduledStartTime instead.
	Due *time.Time `json:"due,omitempty"`
	// Next is a window's following wake-up, recorded on the row.
	Next *time.Time `json:"next,omitempty"`
}

// ScheduledRunResult is what a firing did.
type ScheduledRunResult struct {
	RunID   string `json:"run_id,omitempty"`
	Status  string `json:"status,omitempty"`
	Skipped string `json:"skipped,omitempty"`
}

// fireOptions: a couple of Postgres statements in one transaction, keyed by
// the firing, so retried freely.
var fireOptions = workflow.ActivityOptions{
	Summary: "create the schedule-triggered run",
	// A transaction of a few statements plus resolving the model key.
	StartToCloseTimeout: 30 * time.Second,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval:    500 * time.Millisecond,
		BackoffCoefficient: 2,
		MaximumInterval:    30 * time.Second,
		MaximumAttempts:    10, // a few minutes of a database outage, then this firing is lost
	},
}

// ScheduledRun creates the run of one wake-up and runs it as a child.
func ScheduledRun(ctx workflow.Context, p ScheduledRunParams) (ScheduledRunResult, error) {
	info := workflow.GetInfo(ctx)
	due := info.WorkflowStartTime
	if p.Due != nil {
		due = *p.Due
	} else if t, ok := workflow.GetTypedSearchAttributes(ctx).GetTime(saScheduledStart); ok {
		due = t
	}
	var out schedact.FireOutput
	actx := workflow.WithActivityOptions(ctx, fireOptions)
	// The workflow id alone is not unique: a Schedule names its firings by
	// the second, and two triggers within one second reuse the id of a
	// closed firing. The first run id is stable across retries.
	key := info.WorkflowExecution.ID + "/" + info.FirstRunID
	in := schedact.FireInput{ScheduleID: p.ScheduleID, Key: key, Due: due, Next: p.Next}
	if err := workflow.ExecuteActivity(actx, schedact.FireName, in).Get(actx, &out); err != nil {
		return ScheduledRunResult{}, err
	}
	if out.RunID == "" {
		return ScheduledRunResult{Skipped: out.Skipped}, nil
	}
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:    runwf.WorkflowID(out.RunID),
		StaticSummary: fmt.Sprintf("run of %s (schedule)", out.AgentName),
		Memo:          map[string]any{"agent": out.AgentName, "run_id": out.RunID, "schedule_id": p.ScheduleID},
		Priority:      runwf.Priority(out.OrganisationID, runs.TriggerSchedule),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			runwf.SAOrganisation.ValueSet(out.OrganisationID),
			runwf.SAGuild.ValueSet(out.GuildID),
			runwf.SAAgent.ValueSet(out.AgentID),
			runwf.SATrigger.ValueSet(runs.TriggerSchedule),
		),
		// Ending a firing (terminating it) asks the run to cancel, so the
		// run still records how it ended.
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_REQUEST_CANCEL,
	})
	var res runwf.Result
	err := workflow.ExecuteChildWorkflow(cctx, runwf.WorkflowName, runwf.Params{RunID: out.RunID, AgentID: out.AgentID,
		GuildID: out.GuildID, OrganisationID: out.OrganisationID, Trigger: runs.TriggerSchedule}).Get(ctx, &res)
	if err != nil {
		// The run recorded its own failure; the firing itself did its job.
		workflow.GetLogger(ctx).Warn("scheduled run ended in error", "run_id", out.RunID, "error", err)
		return ScheduledRunResult{RunID: out.RunID, Status: runs.StatusFailed}, nil
	}
	return ScheduledRunResult{RunID: out.RunID, Status: res.Status}, nil
}
