package connect

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	acts "github.com/guilds/guilds/activities/connect"
)

// ErrSetup is wrapped by Start when the login could not be prepared
// (discovery, registration, endpoint policy); its message is safe to show.
var ErrSetup = errors.New("OAuth setup failed")

// ErrNoLogin: no connect workflow runs for the connection.
var ErrNoLogin = errors.New("no login is waiting for this callback")

// ErrNoURL: the login's authorization URL could not be read back.
var ErrNoURL = errors.New("the login's authorization URL is not available")

// PendingURLs reads a pending login's authorization URL back from where it
// is kept sealed: the connector engine, which main hands over.
type PendingURLs interface {
	PendingAuthorizationURL(ctx context.Context, connectionID uuid.UUID) (string, error)
}

// Start begins (or restarts) a connection's login and waits for its
// authorization URL. The workflow answers a marker in its place (the URL
// carries the state and stays out of history); the URL is read back from
// the pending login, sealed, through urls (nil: ErrNoURL).
func Start(ctx context.Context, c client.Client, taskQueue string, in Input, urls PendingURLs) (string, error) {
	u, err := start(ctx, c, taskQueue, in)
	if err != nil || u != acts.PendingURLMarker {
		return u, err // a login recorded before the marker answers the URL itself
	}
	if urls == nil {
		return "", ErrNoURL
	}
	id, err := uuid.Parse(in.ConnectionID)
	if err != nil {
		return "", err
	}
	u, err = urls.PendingAuthorizationURL(ctx, id)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoURL, err)
	}
	return u, nil
}

func start(ctx context.Context, c client.Client, taskQueue string, in Input) (string, error) {
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
