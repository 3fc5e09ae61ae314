// Package githubinstall is the GitHub App connect workflow: it waits for
// GitHub's callback within a deadline, has the callback's code checked
// (Authorize: the installation is kept only when the user's token reaches
// it), waits for the picker when the user reaches several installations,
// and finishes the login; a denied, refused or missing callback abandons a
// new pending login, and an install waiting for an organisation admin's
// approval (setup_action=request) releases it, still pending.
//
// The API hands each callback and choice over as an update and reads the
// step it led to. History holds ids, an account login and sealed
// parameters; never a code, a token or the state.
package githubinstall

import (
	"errors"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	acts "github.com/guilds/guilds/activities/githubinstall"
)

// WorkflowName is the registered name.
const WorkflowName = "githubinstall"

// Updates the API sends.
const (
	UpdateCallback = "callback" // a Callback; answers the Step it led to
	UpdateChoice   = "choice"   // a Callback holding the picker's account
)

// DefaultDeadline bounds the wait for GitHub's callback (and the picker).
const DefaultDeadline = 15 * time.Minute

// ID is the workflow id of a connection's install; a new connect replaces it.
func ID(connectionID string) string { return "githubinstall-" + connectionID }

// Input starts an install or authorization.
type Input struct {
	ConnectionID string
	Deadline     time.Duration // 0: DefaultDeadline
}

// Callback is what the API hands over: sealed parameters, GitHub's error
// code, or Requested for an install waiting for an admin's approval.
type Callback struct {
	Sealed    []byte
	Error     string
	Requested bool
}

// Status of a step or of the workflow's end.
type Status string

// Statuses.
const (
	StatusConnected Status = "connected"
	StatusChoose    Status = "choose"    // the picker must choose among Choices
	StatusRequested Status = "requested" // waits for an organisation admin
	// StatusNeedsApproval: the installation is attached to another
	// organisation; the login stays pending until an instance admin approves.
	StatusNeedsApproval Status = "needs_approval"
	StatusDenied        Status = "denied"
	StatusRefused       Status = "refused"
	StatusExpired       Status = "expired"
)

// Step is the answer to an update, and the workflow's result.
type Step struct {
	Status  Status
	Account string
	Choices int
	Error   string // safe to show
}

// Register adds the workflow and its activities to a worker.
func Register(w worker.Registry, a *acts.Activities) {
	w.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	for name, fn := range map[string]any{
		acts.AuthorizeName: a.Authorize, acts.ChooseName: a.Choose, acts.FinishName: a.Finish,
		acts.AbandonName: a.Abandon, acts.ReleaseName: a.Release,
	} {
		w.RegisterActivityWithOptions(fn, activity.RegisterOptions{Name: name})
	}
}

var (
	// onceOptions: the code is single use, so Authorize runs once; Choose
	// follows it.
	onceOptions = workflow.ActivityOptions{
		StartToCloseTimeout: time.Minute,
		RetryPolicy:         &temporal.RetryPolicy{MaximumAttempts: 1},
	}
	// finishOptions: marking connected and binding is idempotent; retried.
	finishOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumAttempts: 5},
	}
	// cleanupOptions: deleting attempts and a new login is idempotent.
	cleanupOptions = workflow.ActivityOptions{
		StartToCloseTimeout: 30 * time.Second,
		RetryPolicy:         &temporal.RetryPolicy{InitialInterval: time.Second, MaximumInterval: time.Minute},
	}
)

// item is one update waiting for the main loop.
type item struct {
	n    int
	kind string
	cb   Callback
}

// Workflow is the GitHub App connect workflow.
func Workflow(ctx workflow.Context, in Input) (Step, error) {
	var inbox []item
	arrived := 0
	answers := map[int]Step{}
	var ended *Step
	handle := func(kind string) func(workflow.Context, Callback) (Step, error) {
		return func(ctx workflow.Context, cb Callback) (Step, error) {
			if ended != nil {
				return Step{Status: ended.Status, Error: "this login has already ended"}, nil
			}
			n := arrived
			arrived++
			inbox = append(inbox, item{n: n, kind: kind, cb: cb})
			if err := workflow.Await(ctx, func() bool { _, ok := answers[n]; return ok }); err != nil {
				return Step{}, err
			}
			return answers[n], nil
		}
	}
	for _, kind := range []string{UpdateCallback, UpdateChoice} {
		if err := workflow.SetUpdateHandler(ctx, kind, handle(kind)); err != nil {
			return Step{}, err
		}
	}
	deadline := in.Deadline
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	expired := false
	workflow.Go(ctx, func(ctx workflow.Context) {
		_ = workflow.Sleep(ctx, deadline) // cancelled only with the workflow
		expired = true
	})
	// end runs the closing activity, answers the current update and any
	// queued one, and waits for the handlers to return.
	end := func(cur *item, s Step, activityName string) (Step, error) {
		if activityName != "" {
			actx := workflow.WithActivityOptions(ctx, cleanupOptions)
			if err := workflow.ExecuteActivity(actx, activityName, in.ConnectionID).Get(ctx, nil); err != nil {
				return s, err
			}
		}
		ended = &s
		if cur != nil {
			answers[cur.n] = s
		}
		for _, it := range inbox {
			answers[it.n] = Step{Status: s.Status, Error: "this login has already ended"}
		}
		inbox = nil
		_ = workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) })
		return s, nil
	}

	choosing := false
	for {
		_ = workflow.Await(ctx, func() bool { return len(inbox) > 0 || expired })
		if len(inbox) == 0 {
			return end(nil, Step{Status: StatusExpired, Error: "no callback arrived before the login expired"}, acts.AbandonName)
		}
		cur := inbox[0]
		inbox = inbox[1:]
		switch {
		case cur.kind == UpdateCallback && cur.cb.Error != "":
			return end(&cur, Step{Status: StatusDenied, Error: "GitHub refused the login (" + cur.cb.Error + ")"}, acts.AbandonName)
		case cur.kind == UpdateCallback && cur.cb.Requested:
			return end(&cur, Step{Status: StatusRequested,
				Error: "the install waits for an organisation admin's approval: Connect again once they approve it"}, acts.ReleaseName)
		case cur.kind == UpdateChoice && !choosing, cur.kind == UpdateCallback && choosing:
			answers[cur.n] = Step{Status: StatusRefused, Error: "this login is not waiting for that step"}
			continue
		}
		var account string
		octx := workflow.WithActivityOptions(ctx, onceOptions)
		input := acts.Input{ConnectionID: in.ConnectionID, Sealed: cur.cb.Sealed}
		if cur.kind == UpdateCallback {
			var got acts.Authorized
			if err := workflow.ExecuteActivity(octx, acts.AuthorizeName, input).Get(ctx, &got); err != nil {
				st, closing := failed(err)
				return end(&cur, st, closing)
			}
			if got.Choices > 0 {
				choosing = true
				answers[cur.n] = Step{Status: StatusChoose, Choices: got.Choices}
				continue
			}
			account = got.Account
		} else if err := workflow.ExecuteActivity(octx, acts.ChooseName, input).Get(ctx, &account); err != nil {
			st, closing := failed(err)
			return end(&cur, st, closing)
		}
		fctx := workflow.WithActivityOptions(ctx, finishOptions)
		if err := workflow.ExecuteActivity(fctx, acts.FinishName, in.ConnectionID, account).Get(ctx, nil); err != nil {
			return Step{}, err
		}
		return end(&cur, Step{Status: StatusConnected, Account: account}, "")
	}
}

// failed is the step a refused Authorize or Choose ends with, and the
// activity that closes the login: an installation that waits for an
// instance admin's approval keeps the login pending, as an install that
// waits for an organisation admin does; any other refusal abandons it.
func failed(err error) (Step, string) {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) && ae.Type() == acts.ErrTypeApproval {
		return Step{Status: StatusNeedsApproval, Error: message(err)}, acts.ReleaseName
	}
	return Step{Status: StatusRefused, Error: message(err)}, acts.AbandonName
}

// message is the operator-facing text of an activity failure.
func message(err error) string {
	var ae *temporal.ApplicationError
	if errors.As(err, &ae) {
		return ae.Message()
	}
	return "the login could not be completed"
}
