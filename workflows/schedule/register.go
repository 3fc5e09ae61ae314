package schedule

import (
	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	schedact "github.com/guilds/guilds/activities/schedule"
)

// Register adds the schedule workflows and their activities to a worker.
func Register(w sdkworker.Registry, a *schedact.Activities) {
	w.RegisterWorkflowWithOptions(ScheduledRun, workflow.RegisterOptions{Name: ScheduledRunName})
	w.RegisterWorkflowWithOptions(Window, workflow.RegisterOptions{Name: WindowName})
	w.RegisterActivityWithOptions(a.Fire, activity.RegisterOptions{Name: schedact.FireName})
	w.RegisterActivityWithOptions(a.RecordNext, activity.RegisterOptions{Name: schedact.RecordNextName})
}

// Registration is Register as a worker.Registration.
func Registration(a *schedact.Activities) func(sdkworker.Registry) {
	return func(w sdkworker.Registry) { Register(w, a) }
}
