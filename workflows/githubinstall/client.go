package githubinstall

import (
	"context"
	"errors"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"

	acts "github.com/guilds/guilds/activities/githubinstall"
)

// ErrNoLogin: no install workflow runs for the connection.
var ErrNoLogin = errors.New("no GitHub login is waiting for this callback")

// Start begins (or restarts) a connection's install or authorization.
func Start(ctx context.Context, c client.Client, taskQueue string, in Input) error {
	deadline := in.Deadline
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	_, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       ID(in.ConnectionID),
		TaskQueue:                taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		WorkflowExecutionTimeout: deadline + 30*time.Minute,
	}, WorkflowName, in)
	return err
}

// Send hands a callback or the picker's choice (update UpdateCallback or
// UpdateChoice) to the connection's login and answers the step it led to.
func Send(ctx context.Context, c client.Client, connectionID, update string, cb Callback) (Step, error) {
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{WorkflowID: ID(connectionID), UpdateName: update,
		Args: []any{cb}, WaitForStage: client.WorkflowUpdateStageCompleted})
	var step Step
	if err == nil {
		err = h.Get(ctx, &step)
	}
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return Step{}, ErrNoLogin
	}
	return step, err
}

// Registration registers the workflow and its activities on a worker.
func Registration(a *acts.Activities) func(worker.Registry) {
	return func(w worker.Registry) { Register(w, a) }
}
