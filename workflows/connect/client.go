package connect

import (
	"context"
	"errors"
	"fmt"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// ErrSetup is wrapped by Start when the login could not be prepared
// (discovery, registration, endpoint policy); its message is safe to show.
var ErrSetup = errors.New("OAuth setup failed")

// ErrNoLogin: no connect workflow runs for the connection.
var ErrNoLogin = errors.New("no login is waiting for this callback")

// Start begins (or restarts) a connection's login and waits for its
// authorization URL.
func Start(ctx context.Context, c client.Client, taskQueue string, in Input) (string, error) {
	deadline := in.Deadline
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID:                       ID(in.ConnectionID),
		TaskQueue:                taskQueue,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
		// Past the callback deadline plus the time to finish or clean up.
		WorkflowExecutionTimeout: deadline + 30*time.Minute,
	}, WorkflowName, in)
	if err != nil {
		return "", err
	}
	h, err := c.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: run.GetID(), RunID: run.GetRunID(),
		UpdateName: UpdateAuthorizationURL, WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	var url string
	if err == nil {
		err = h.Get(ctx, &url)
	}
	if err == nil {
		return url, nil
	}
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return "", fmt.Errorf("%w: %s", ErrSetup, ae.Message())
	}
	// The workflow ended before the update ran: its result says why.
	var res Result
	if gerr := run.Get(ctx, &res); gerr == nil && res.Error != "" {
		return "", fmt.Errorf("%w: %s", ErrSetup, res.Error)
	}
	return "", err
}

// Deliver signals the browser's return to the connection's login.
func Deliver(ctx context.Context, c client.Client, connectionID string, cb Callback) error {
	err := c.SignalWorkflow(ctx, ID(connectionID), "", SignalCallback, cb)
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return ErrNoLogin
	}
	return err
}

// Wait returns the outcome of the connection's login.
func Wait(ctx context.Context, c client.Client, connectionID string) (Result, error) {
	var res Result
	err := c.GetWorkflow(ctx, ID(connectionID), "").Get(ctx, &res)
	return res, err
}
