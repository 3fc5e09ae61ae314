// Package connect is the OAuth connect workflow: prepare the login and hand
// the authorization URL to the API (an update), wait for the callback signal
// within a deadline, exchange the code, mark the login connected and list its
// tools; a denied, failed or missing callback abandons a new pending login.
//
// Only ids, a marker standing for the authorization URL (which stays sealed
// in the pending login), the sealed callback and the digest of its state
// (to recognise a repeated callback) enter history; the PKCE verifier and
// tokens stay in activities (activities/connect).
package connect

import (
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	acts "github.com/guilds/guilds/activities/connect"
)

// WorkflowName is the registered name; it never changes with Go renames.
const WorkflowName = "connect"

// Names of the workflow's messages.
const (
	// UpdateAuthorizationURL waits for the authorization URL (or the setup error).
	UpdateAuthorizationURL = "authorization_url"
	// QueryAuthorizationURL reads it without waiting.
	QueryAuthorizationURL = "authorization_url"
	// SignalCallback delivers the browser's return.
	SignalCallback = "callback"
	// QueryTookState answers which state's callback the login took (TookState).
	QueryTookState = "took_state"
)

// DefaultDeadline bounds the wait for the callback.
const DefaultDeadline = 15 * time.Minute

// ID is the workflow id of a connection's login; a new connect of the same
// connection replaces a running one.
func ID(connectionID string) string { return "connect-" + connectionID }

// Input starts a login.
type Input struct {
	ConnectionID string
	RedirectURI  string
	Deadline     time.Duration // 0: DefaultDeadline
}

// Callback is the signal: Sealed callback parameters, or the provider's
// error code (access_denied…), with the SHA-256 digest of the callback's
// state, by which a repeat of the same callback is recognised (TookState).
type Callback struct {
	Sealed      []byte
	Error       string
	StateDigest []byte `json:",omitempty"`
}

// Outcome is how a login's workflow ended (Result.Status).
type Outcome string

// Outcomes of Result.Status.
const (
	StatusConnected Outcome = "connected"
	StatusDenied    Outcome = "denied"  // the provider answered an error
	StatusFailed    Outcome = "failed"  // setup or exchange failed
	StatusExpired   Outcome = "expired" // no callback within the deadline
)

// Result is the workflow's outcome.
type Result struct {
	Status      Outcome
	AccountHint string
	Tools       int
	Error       string // safe to show: no secret
}

// Register adds the workflow and its activities to a worker.
func Register(w worker.Registry, a *acts.Activities) {
	w.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	for name, fn := range map[string]any{
		acts.PrepareName: a.Prepare, acts.ExchangeName: a.Exchange, acts.FinishName: a.Finish, acts.AbandonName: a.Abandon,
	} {
		w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

// activityNames are the names this workflow schedules: the stable ones, or,
// replaying a history recorded before them, the method names it scheduled.
// Those are not registered any more: a login in flight across the upgrade
// fails its next activity, is abandoned, and is started again.
type activityNames struct{ prepare, exchange, finish, abandon string }

// versionActivityNames gates the switch to stable activity names.
const versionActivityNames = "stable-activity-names"

// versionSealedURL gates keeping the authorization URL out of history.
const versionSealedURL = "sealed-authorization-url"

func namesFor(ctx workflow.Context) activityNames {
	if workflow.GetVersion(ctx, versionActivityNames, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return activityNames{acts.LegacyPrepareName, acts.LegacyExchangeName, acts.LegacyFinishName, acts.LegacyAbandonName}
	}
	return activityNames{acts.PrepareName, acts.ExchangeName, acts.FinishName, acts.AbandonName}
}

// Workflow is the connect workflow.
func Workflow(ctx workflow.Context, in Input) (Result, error) {
	names := namesFor(ctx)
	var authURL, setupErr string
	ready := func() bool { return authURL != "" || setupErr != "" }
	if err := workflow.SetUpdateHandler(ctx, UpdateAuthorizationURL, func(ctx workflow.Context) (string, error) {
		if err := workflow.Await(ctx, ready); err != nil {
			return "", err
		}
		if setupErr != "" {
			return "", temporal.NewApplicationError(setupErr, acts.ErrTypeSetup)
		}
		return authURL, nil
	}); err != nil {
		return Result{}, err
	}
	if err := workflow.SetQueryHandler(ctx, QueryAuthorizationURL, func() (string, error) { return authURL, nil }); err != nil {
		return Result{}, err
	}
	deadline := in.Deadline
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	// Adding a query writes nothing to history: logins recorded before it
	// replay unchanged, and answer an empty TookState.
	var took TookState
	if err := workflow.SetQueryHandler(ctx, QueryTookState, func() (TookState, error) { return took, nil }); err != nil {
		return Result{}, err
	}
	callbacks := workflow.GetSignalChannel(ctx, SignalCallback)

	abandon := func(r Result) (Result, error) {
		actx := workflow.WithActivityOptions(ctx, cleanupOptions)
		if err := workflow.ExecuteActivity(actx, names.abandon, in.ConnectionID).Get(ctx, nil); err != nil {
			return r, err
		}
		_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
		return r, nil
	}

	pctx := workflow.WithActivityOptions(ctx, prepareOptions)
	// Since versionSealedURL the authorization URL (it carries the state)
	// stays sealed in the pending login and history holds only a marker.
	keepURL := workflow.GetVersion(ctx, versionSealedURL, workflow.DefaultVersion, 1) == 1
	err := workflow.ExecuteActivity(pctx, names.prepare, acts.PrepareInput{ConnectionID: in.ConnectionID, RedirectURI: in.RedirectURI,
		KeepURL: keepURL}).Get(ctx, &authURL)
	if err != nil {
		setupErr = message(err)
		return abandon(Result{Status: StatusFailed, Error: setupErr})
	}

	var cb Callback
	got := false
	tctx, cancelTimer := workflow.WithCancel(ctx)
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(callbacks, func(c workflow.ReceiveChannel, _ bool) {
		c.Receive(ctx, &cb)
		got = true
		if len(cb.StateDigest) > 0 {
			took = TookState{StateDigest: cb.StateDigest, Until: workflow.GetInfo(ctx).WorkflowStartTime.Add(deadline)}
		}
	})
	sel.AddFuture(workflow.NewTimer(tctx, deadline), func(workflow.Future) {})
	sel.Select(ctx)
	cancelTimer()
	switch {
	case !got:
		return abandon(Result{Status: StatusExpired, Error: "no callback arrived before the login expired"})
	case cb.Error != "":
		return abandon(Result{Status: StatusDenied, Error: "the provider refused the login (" + cb.Error + ")"})
	case len(cb.Sealed) == 0:
		return abandon(Result{Status: StatusDenied, Error: "the provider sent the browser back without an authorization code"})
	}

	xctx := workflow.WithActivityOptions(ctx, exchangeOptions)
	if err := workflow.ExecuteActivity(xctx, names.exchange, acts.ExchangeInput{ConnectionID: in.ConnectionID, Sealed: cb.Sealed}).Get(ctx, nil); err != nil {
		return abandon(Result{Status: StatusFailed, Error: message(err)})
	}
	var fin acts.FinishResult
	fctx := workflow.WithActivityOptions(ctx, finishOptions)
	if err := workflow.ExecuteActivity(fctx, names.finish, in.ConnectionID).Get(ctx, &fin); err != nil {
		// The service refused the token it just granted (an adapter's check):
		// the login is abandoned like a refused exchange.
		var ae *temporal.ApplicationError
		if errors.As(err, &ae) && ae.Type() == acts.ErrTypeRefused {
			return abandon(Result{Status: StatusFailed, Error: ae.Message()})
		}
		return Result{}, err
	}
	_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
	return Result{Status: StatusConnected, AccountHint: fin.AccountHint, Tools: fin.Tools}, nil
}

// message is the operator-facing text of an activity failure.
func message(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Message()
	}
	return "the login could not be completed"
}
