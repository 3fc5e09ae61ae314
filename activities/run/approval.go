package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
)

// Activity names of the approval wait (docs/adr/0514).
const (
	ApprovalAskName    = "approval_ask"
	ApprovalSettleName = "approval_settle"
)

// ApprovalGate says whether a call must wait for a person before it runs.
// The switches' Ask state implements it; nil never asks.
type ApprovalGate interface {
	// Need returns nil when the call may run unasked.
	Need(ctx context.Context, r runs.Run, offered runs.OfferedTool, args json.RawMessage) (*ApprovalNeed, error)
}

// ApprovalNeed is why and how a call asks.
type ApprovalNeed struct {
	LoginID       string        // the connection that would serve it, "" for none
	PolicyVersion string        // approvals.Version of the deciding policy
	Because       string        // in words, for the operator
	Wait          time.Duration // how long the run waits; 0: approvals.DefaultWait
}

// ApprovalAsk is a tool activity's answer for a call that did not run because
// it needs an approval: the binding the approval must carry. It crosses the
// workflow history, so it holds ids and digests, never arguments.
type ApprovalAsk struct {
	Binding approvals.Binding `json:"binding"`
	Because string            `json:"because"`
	Wait    time.Duration     `json:"wait"`
}

// ApprovalAskInput records the request.
type ApprovalAskInput struct {
	ToolInput
	Ask ApprovalAsk `json:"ask"`
}

// ApprovalSettleInput ends a wait: the workflow heard a decision, or its
// timer fired.
type ApprovalSettleInput struct {
	RunID     string `json:"run_id"`
	RequestID string `json:"request_id"`
}

// ApprovalSettled is how the request stands once the wait is over.
type ApprovalSettled struct {
	State   string `json:"state"`
	Message string `json:"message,omitempty"` // the tool result of a denial or an expiry
}

// approvalCheck runs before a call. It returns a non-nil ask when the call
// must not run yet; an error result (denied) when its approval cannot serve it.
func (a *Activities) approvalCheck(ctx context.Context, r runs.Run, in ToolInput, offered runs.OfferedTool, args json.RawMessage) (*ApprovalAsk, string, error) {
	if a.d.Approvals == nil {
		return nil, "", nil
	}
	need, err := a.d.Approvals.Need(ctx, r, offered, args)
	if err != nil || need == nil {
		return nil, "", err
	}
	digest, err := approvals.Digest(args)
	if err != nil {
		return nil, "this call cannot be approved: " + err.Error() + "; call it again with plain JSON arguments", nil
	}
	// The operator's setting was validated when saved (approvals.WaitFor);
	// here it is only bounded.
	wait := min(need.Wait, approvals.MaxWait)
	if wait <= 0 {
		wait = approvals.DefaultWait
	}
	now := time.Now()
	want := approvals.Binding{RunID: r.ID, Seq: in.Seq, AgentID: r.AgentID, Tool: in.Name, LoginID: need.LoginID,
		ArgsDigest: digest, PolicyVersion: need.PolicyVersion, ExpiresAt: now.Add(wait)}
	ask := &ApprovalAsk{Binding: want, Because: need.Because, Wait: wait}
	if in.ApprovalID == "" {
		return ask, "", nil
	}
	var used approvals.Request
	err = pgx.BeginFunc(ctx, a.d.DB, func(tx pgx.Tx) error {
		var err error
		used, err = approvals.Use(ctx, tx, in.ApprovalID, want, now)
		return err
	})
	switch {
	case err == nil:
		return nil, "", nil
	case errors.Is(err, approvals.ErrUsed) && offered.Idempotent && used.SameCall(want) == nil:
		return nil, "", nil // this very call, retried after its approval was spent
	case errors.Is(err, approvals.ErrUsed):
		return nil, "this approved call was interrupted before it reported a result and is not run twice; check its effect, then call it again to ask anew", nil
	case errors.Is(err, approvals.ErrExpired):
		return nil, "the approval of this call expired before it ran; call it again to ask anew", nil
	case errors.Is(err, approvals.ErrArgumentsDiffer), errors.Is(err, approvals.ErrLoginDiffers),
		errors.Is(err, approvals.ErrPolicyChanged), errors.Is(err, approvals.ErrNotApproved):
		return ask, "", nil // ask again, for the call as it would run now
	}
	return nil, "", err
}

// ApprovalAsk records the request and marks the run waiting. The arguments
// are kept redacted with the run's set, for the operator to read.
func (a *Activities) ApprovalAsk(ctx context.Context, in ApprovalAskInput) (string, error) {
	r, err := runs.Load(ctx, a.d.DB, in.RunID)
	if err != nil {
		return "", err
	}
	red, err := a.redactor(ctx, r.AgentID)
	if err != nil {
		return "", err
	}
	shown := json.RawMessage(red.Redact(in.Arguments))
	if !json.Valid(shown) {
		shown = json.RawMessage(`{}`)
	}
	var id string
	err = pgx.BeginFunc(ctx, a.d.DB, func(tx pgx.Tx) error {
		req, err := approvals.Ask(ctx, tx, approvals.Request{OrganisationID: r.OrganisationID, GuildID: r.GuildID,
			Binding: in.Ask.Binding, Arguments: shown, AskedBecause: in.Ask.Because})
		if err != nil {
			return err
		}
		id = req.ID
		return runs.MarkWaiting(ctx, tx, r.ID)
	})
	if err != nil {
		return "", err
	}
	a.d.Log.InfoContext(ctx, "tool call waits for approval", "run_id", r.ID, "seq", in.Seq, "tool", in.Name, "request_id", id)
	return id, nil
}

// ApprovalSettle expires the request if nobody answered, moves the run back
// to running when no other call of it waits, and says how the request stands.
func (a *Activities) ApprovalSettle(ctx context.Context, in ApprovalSettleInput) (ApprovalSettled, error) {
	var req approvals.Request
	err := pgx.BeginFunc(ctx, a.d.DB, func(tx pgx.Tx) error {
		var err error
		req, err = approvals.Expire(ctx, tx, in.RequestID) // with its audit event
		return err
	})
	if err != nil {
		return ApprovalSettled{}, err
	}
	if err := a.resumeIfNoneWaits(ctx, in.RunID); err != nil {
		return ApprovalSettled{}, err
	}
	out := ApprovalSettled{State: string(req.State)}
	switch req.State {
	case approvals.StateDenied:
		who := req.DecidedByName
		if who == "" {
			who = "an operator"
		}
		out.Message = "denied by " + who
		if req.Reason != "" {
			out.Message += ": " + req.Reason
		}
		out.Message += ". This call did not run"
	case approvals.StateExpired:
		out.Message = fmt.Sprintf("nobody approved this call within %s, so it did not run", humanWait(req.ExpiresAt.Sub(req.CreatedAt)))
	}
	return out, nil
}

// noteApproval shows the wait in the transcript: the call's metadata names
// its approval (the audit's link from the call to who approved it), who gave
// it and how long the call waited for it. The call has run by now: a failed
// read costs the note, never the result.
func (a *Activities) noteApproval(ctx context.Context, id string, meta map[string]any) {
	meta["approval_id"] = id
	req, err := approvals.Get(ctx, a.d.DB, id, nil)
	if err != nil {
		a.d.Log.WarnContext(ctx, "could not read the approval of a call", "request_id", id, "err", err)
		return
	}
	meta["approved_by"] = req.DecidedByName
	if req.DecidedAt != nil {
		meta["waited"] = req.DecidedAt.Sub(req.CreatedAt).Round(time.Second).String()
	}
}

func (a *Activities) resumeIfNoneWaits(ctx context.Context, runID string) error {
	waiting, err := approvals.PendingForRun(ctx, a.d.DB, runID)
	if err != nil || waiting > 0 {
		return err
	}
	if waiting, err = inputs.PendingForRun(ctx, a.d.DB, runID); err != nil || waiting > 0 {
		return err
	}
	if waiting, err = agentsecrets.WaitedForInRun(ctx, a.d.DB, runID); err != nil || waiting > 0 {
		return err
	}
	if tasks, err := runs.FollowedTasks(ctx, a.d.DB, runID); err != nil || len(tasks) > 0 {
		return err
	}
	return runs.MarkResumed(ctx, a.d.DB, runID)
}

func humanWait(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%d days", int(d.Hours()/24+0.5))
	case d >= 2*time.Hour:
		return fmt.Sprintf("%d hours", int(d.Hours()+0.5))
	}
	return d.Round(time.Minute).String()
}

// PolicyGate is the ApprovalGate of the operators' approval policies
// (approval_policies, resolved agent → guild → organisation → platform).
type PolicyGate struct{ DB store.DB }

// Need implements ApprovalGate.
func (g PolicyGate) Need(ctx context.Context, r runs.Run, offered runs.OfferedTool, args json.RawMessage) (*ApprovalNeed, error) {
	at := approvals.Place{OrganisationID: r.OrganisationID, GuildID: r.GuildID, AgentID: r.AgentID}
	ask, err := approvals.Check(ctx, g.DB, at, r.ID, offered.Name, args)
	if err != nil || ask == nil {
		return nil, err
	}
	return &ApprovalNeed{LoginID: offered.ConnectionID, PolicyVersion: ask.Version, Because: ask.Because, Wait: ask.Wait}, nil
}
