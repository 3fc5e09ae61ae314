package run

import (
	"go.temporal.io/sdk/workflow"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/tools"
)

// ApprovalSignal tells a waiting run that a person answered one of its
// requests (an approval, or a request a tool's handler waits for, such as
// secret_request's). It carries the request id only: the answer, who gave it and why
// stay in PostgreSQL (approval_requests), out of the history.
const ApprovalSignal = "approval"

// ApprovalSignalPayload is the signal's argument.
type ApprovalSignalPayload struct {
	RequestID string `json:"request_id"`
}

// askedCall is a call whose tool activity answered that it must wait: for
// an approval (ask), or for an answer its own handler waits for (suspend).
type askedCall struct {
	in      runact.ToolInput
	ask     *runact.ApprovalAsk
	suspend *tools.Suspension
	task    *tools.RemoteTask // the server runs it as a task (task.go)
}

// approvalWaits holds the answers a run has heard of. The signal listener
// starts at the first call that asks, so runs that never ask keep the
// history they always had.
type approvalWaits struct {
	heard     map[string]bool
	listening bool
	// stopped names the budget that refused a call once it was let through.
	stopped string
}

func newApprovalWaits(workflow.Context) *approvalWaits {
	return &approvalWaits{heard: map[string]bool{}}
}

func (w *approvalWaits) listen(ctx workflow.Context) {
	if w.listening {
		return
	}
	w.listening = true
	ch := workflow.GetSignalChannel(ctx, ApprovalSignal)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			var p ApprovalSignalPayload
			if more := ch.Receive(ctx, &p); !more {
				return
			}
			w.heard[p.RequestID] = true
		}
	})
}

// all waits for every asked call of one turn, concurrently, and leaves each
// one's result stored: the call's own once approved, a denial otherwise.
func (w *approvalWaits) all(ctx workflow.Context, refs map[string]runact.ToolRef, asked []askedCall) error {
	w.listen(ctx)
	errs := make([]error, len(asked))
	done := 0
	for i, c := range asked {
		workflow.Go(ctx, func(ctx workflow.Context) {
			errs[i] = w.one(ctx, refs, c)
			done++
		})
	}
	if err := workflow.Await(ctx, func() bool { return done == len(asked) }); err != nil {
		return err
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// one waits for the call as it asked and runs it again, until it runs or is
// denied. An approved call whose arguments, login or policy no longer match
// asks again; the tool activity decides that, at call time.
func (w *approvalWaits) one(ctx workflow.Context, refs map[string]runact.ToolRef, c askedCall) error {
	in := c.in
	for {
		if c.task != nil {
			return w.followTask(ctx, in, *c.task)
		}
		if c.ask != nil {
			id, ok, err := w.approval(ctx, in, *c.ask)
			if err != nil || !ok {
				return err // denied or expired: recorded
			}
			in.ApprovalID = id
		} else {
			heard, err := w.suspended(ctx, *c.suspend)
			if err != nil {
				return err
			}
			in.WaitOver = !heard
		}
		var res runact.ToolOutput
		err := executeTool(ctx, refs, in).Get(ctx, &res)
		in.WaitOver = false
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return record(ctx, in, runs.OutcomeInterrupted, interrupted).Get(ctx, nil)
		}
		if res.Stopped != "" && w.stopped == "" {
			w.stopped = res.Stopped // a budget refused it once approved: the run ends
		}
		if res.Approval == nil && res.Suspend == nil && res.Task == nil {
			return nil
		}
		c.ask, c.suspend, c.task = res.Approval, res.Suspend, res.Task
		if c.ask != nil {
			in.ApprovalID = ""
		}
	}
}

// approval records the request, waits for an answer or the expiry, and
// reports whether the call was approved; a denial is recorded as the call's
// result.
func (w *approvalWaits) approval(ctx workflow.Context, in runact.ToolInput, ask runact.ApprovalAsk) (string, bool, error) {
	bctx := workflow.WithActivityOptions(ctx, approvalOptions(in.Name))
	var id string
	if err := workflow.ExecuteActivity(bctx, runact.ApprovalAskName, runact.ApprovalAskInput{ToolInput: in, Ask: ask}).Get(bctx, &id); err != nil {
		return "", false, err
	}
	if _, err := workflow.AwaitWithTimeout(ctx, ask.Wait, func() bool { return w.heard[id] }); err != nil {
		return "", false, err // cancelled
	}
	var settled runact.ApprovalSettled
	if err := workflow.ExecuteActivity(bctx, runact.ApprovalSettleName, runact.ApprovalSettleInput{RunID: in.RunID, RequestID: id}).Get(bctx, &settled); err != nil {
		return "", false, err
	}
	if settled.State != string(approvals.StateApproved) {
		in.ApprovalID = id // the denied call's audit event names the request that denied it
		return "", false, record(ctx, in, runs.OutcomeDenied, settled.Message).Get(ctx, nil)
	}
	return id, true, nil
}

// suspended waits until the handler's key is signalled or its time comes,
// and reports whether it was signalled. The signal is consumed, so a
// handler that suspends again waits again.
func (w *approvalWaits) suspended(ctx workflow.Context, s tools.Suspension) (bool, error) {
	if d := s.Until.Sub(workflow.Now(ctx)); d > 0 {
		if _, err := workflow.AwaitWithTimeout(ctx, d, func() bool { return w.heard[s.Key] }); err != nil {
			return false, err
		}
	}
	heard := w.heard[s.Key]
	delete(w.heard, s.Key)
	return heard, nil
}

func approvalOptions(tool string) workflow.ActivityOptions {
	opts := bookkeepingOptions
	opts.Summary = "approval for " + tool
	return opts
}
