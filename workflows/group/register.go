package group

import (
	"go.temporal.io/sdk/activity"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	groupact "github.com/guilds/guilds/activities/group"
)

// Register adds the route workflow and its activities to a worker. The run
// workflow its children run is registered by workflows/run.
func Register(w sdkworker.Registry, a *groupact.Activities) {
	w.RegisterWorkflowWithOptions(Route, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(a.Decide, activity.RegisterOptions{Name: groupact.DecideName})
	w.RegisterActivityWithOptions(a.Deliver, activity.RegisterOptions{Name: groupact.DeliverName})
	w.RegisterActivityWithOptions(a.Answer, activity.RegisterOptions{Name: groupact.AnswerName})
}

// Registration is Register as a worker.Registration.
func Registration(a *groupact.Activities) func(sdkworker.Registry) {
	return func(w sdkworker.Registry) { Register(w, a) }
}
