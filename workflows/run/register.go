package run

import (
	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	runact "github.com/guilds/guilds/activities/run"
)

// Register adds the run workflow and its activities to a worker.
func Register(w sdkworker.Registry, a *runact.Activities) {
	w.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(a.Snapshot, activity.RegisterOptions{Name: runact.SnapshotName})
	w.RegisterActivityWithOptions(a.Model, activity.RegisterOptions{Name: runact.ModelName})
	w.RegisterActivityWithOptions(a.Tool, activity.RegisterOptions{Name: runact.ToolName})
	w.RegisterActivityWithOptions(a.ToolLocal, activity.RegisterOptions{Name: runact.ToolLocalName})
	w.RegisterActivityWithOptions(a.ToolRecord, activity.RegisterOptions{Name: runact.ToolRecordName})
	w.RegisterActivityWithOptions(a.Finish, activity.RegisterOptions{Name: runact.FinishName})
	w.RegisterActivityWithOptions(a.ApprovalAsk, activity.RegisterOptions{Name: runact.ApprovalAskName})
	w.RegisterActivityWithOptions(a.ApprovalSettle, activity.RegisterOptions{Name: runact.ApprovalSettleName})
	w.RegisterActivityWithOptions(a.TaskPoll, activity.RegisterOptions{Name: runact.TaskPollName})
	w.RegisterActivityWithOptions(a.TaskCancel, activity.RegisterOptions{Name: runact.TaskCancelName})
}

// Registration is Register as a worker.Registration.
func Registration(a *runact.Activities) func(sdkworker.Registry) {
	return func(w sdkworker.Registry) { Register(w, a) }
}
