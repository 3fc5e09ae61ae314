// Package auditprune is the daily prune of the audit trail: a Temporal
// Schedule (visible with `temporal schedule list`) starts the workflow once
// a day, and its one activity deletes the events older than the retention
// setting. Every worker ensures the schedule at start; the first creates it.
package auditprune

import (
	"context"
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	acts "github.com/guilds/guilds/activities/auditprune"
)

// Names that never change with Go renames.
const (
	WorkflowName = "audit_prune"
	// ScheduleID is the Temporal Schedule that starts the workflow daily.
	ScheduleID = "guilds-audit-prune"
	// Every is the schedule's interval.
	Every = 24 * time.Hour
)

// pruneOptions bound the prune's one activity.
var pruneOptions = workflow.ActivityOptions{
	// A prune of a large backlog deletes in batches of 10 000; half an hour
	// is ample, and a cut-off prune is finished by the retry.
	StartToCloseTimeout: 30 * time.Minute,
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval: 10 * time.Second,
		MaximumAttempts: 5,
	},
}

// Workflow prunes the trail once and reports how many events went.
func Workflow(ctx workflow.Context) (int64, error) {
	var deleted int64
	err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, pruneOptions), acts.PruneName).Get(ctx, &deleted)
	return deleted, err
}

// Register adds the workflow and its activity to a worker.
func Register(w sdkworker.Registry, a *acts.Activities) {
	w.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(a.Prune, activity.RegisterOptions{Name: acts.PruneName})
}

// Registration is Register as a worker.Registration.
func Registration(a *acts.Activities) func(sdkworker.Registry) {
	return func(w sdkworker.Registry) { Register(w, a) }
}

// EnsureSchedule creates the daily schedule unless it exists; a new one
// prunes at once. Workers starting together race harmlessly: the losers see
// it exists.
func EnsureSchedule(ctx context.Context, c client.Client, taskQueue string) error {
	_, err := c.ScheduleClient().Create(ctx, client.ScheduleOptions{
		ID:   ScheduleID,
		Spec: client.ScheduleSpec{Intervals: []client.ScheduleIntervalSpec{{Every: Every}}},
		Action: &client.ScheduleWorkflowAction{ID: "audit-prune", Workflow: WorkflowName, TaskQueue: taskQueue,
			WorkflowExecutionTimeout: 2 * time.Hour},
		Overlap:            enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		TriggerImmediately: true,
		Note:               "guilds: deletes audit events older than GUILDS_AUDIT_RETENTION_DAYS",
	})
	if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
		return nil
	}
	return err
}
