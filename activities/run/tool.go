package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"go.temporal.io/sdk/activity"

	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/native/scripts"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/telemetry"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/internal/workspacefiles"
)

// Tool runs one tool call: it looks the tool up in the run's snapshot, runs
// the native handler (its raw result through tools.Stamp with the run's
// redaction set) or the remote call path (internal/remote, which stamps the
// same way), and stores
// only the stamped string. A call already stored (a retry, or a restart after
// the result was written) returns the stored result without running again.
//
// The bookkeeping before and after the call (the stored call, the run, the
// snapshot; then the call, its message and the budget) runs on one
// connection each, acquired once: under load every statement sent to the
// pool waits for a connection of its own, and a quick call is mostly these
// statements. No connection is held while the tool runs (its handler or the
// remote call uses the pool as it needs).
func (a *Activities) Tool(ctx context.Context, in ToolInput) (ToolOutput, error) {
	r, snap, prev, err := a.begin(ctx, in)
	if err != nil || prev != nil {
		if prev != nil {
			return *prev, nil
		}
		return ToolOutput{}, err
	}
	if out, err := a.toolBudget(ctx, r, snap, in); err != nil || out != nil {
		if out != nil {
			return *out, nil
		}
		return ToolOutput{}, err
	}
	call, hidden, err := a.revealArguments(ctx, in)
	if err != nil {
		return ToolOutput{}, err
	}
	red, err := a.redactor(ctx, r.AgentID, hidden...)
	if err != nil {
		return ToolOutput{}, err
	}
	ctx = tools.WithLogRedactor(ctx, red) // failure detail the registry logs is redacted too
	if offered, ok := snap.Tool(in.Name); ok {
		ask, denied, err := a.approvalCheck(ctx, r, in, offered, json.RawMessage(strings.TrimSpace(call.Arguments)))
		if err != nil {
			return ToolOutput{}, err
		}
		if ask != nil {
			return ToolOutput{Seq: in.Seq, Approval: ask}, nil
		}
		if denied != "" {
			return a.ToolRecord(ctx, RecordInput{ToolInput: in, Outcome: runs.OutcomeDenied, Message: denied})
		}
	}
	started := time.Now()
	tctx, span := telemetry.StartToolCall(ctx, in.RunID, in.Name, in.CallID)
	var suspended func() *tools.Suspension
	if in.WaitOver {
		tctx, suspended = tools.WithWaitOver(tctx), func() *tools.Suspension { return nil }
	} else {
		tctx, suspended = tools.WithSuspend(tctx)
	}
	tctx, handed := tools.WithTaskHandOver(tctx)
	stamped, outcome, meta := a.invoke(tctx, r, snap, call, red)
	if sus := suspended(); sus != nil {
		// The handler waits for a person: nothing is stored, the workflow
		// calls it again once the key is signalled or the time has come.
		span.End(metaString(meta, "kind"), metaString(meta, "class"), "suspended")
		if err := runs.MarkWaiting(ctx, a.d.DB, in.RunID); err != nil {
			return ToolOutput{}, err
		}
		return ToolOutput{Seq: in.Seq, Suspend: sus}, nil
	}
	if task := handed(); task != nil && red.Redact(task.TaskID) != task.TaskID {
		// The id would enter the workflow history: one that holds a value
		// of the run's redaction set is refused, the task left to expire.
		stamped = tools.Stamp(tools.ErrorResult("the server answered with a task whose id holds a secret value, so it was not followed"),
			tools.StampOptions{Redactor: red, Remaining: in.Remaining, Log: a.d.Log})
		outcome = runs.OutcomeError
	} else if task != nil {
		// The server runs the call as a task: nothing is stored, the
		// workflow polls it on durable timers (task.go).
		span.End(metaString(meta, "kind"), metaString(meta, "class"), "task")
		task.Started = started
		if err := runs.FollowTask(ctx, a.d.DB, in.RunID, in.Seq, in.Name, task.TaskID); err != nil {
			return ToolOutput{}, err
		}
		a.d.Log.InfoContext(ctx, "tool call became a task", "run_id", in.RunID, "seq", in.Seq, "tool", in.Name)
		return ToolOutput{Seq: in.Seq, Task: task}, nil
	}
	if in.ApprovalID != "" {
		a.noteApproval(ctx, in.ApprovalID, meta)
	}
	span.Content(red.Redact(in.Arguments), stamped) // recorded only with GUILDS_OTEL_CAPTURE_CONTENT=1
	span.End(metaString(meta, "kind"), metaString(meta, "class"), outcome)
	offered, _ := snap.Tool(in.Name)
	out, err := a.saveCall(ctx, r, in, offered, red, stamped, outcome, meta, started, hidden)
	if err == nil && r.Status == runs.StatusWaiting {
		// Once its result is stored the call no longer counts as waiting.
		err = a.resumeIfNoneWaits(ctx, in.RunID)
	}
	return out, err
}

// begin reads what a call needs before it runs: the run and its snapshot,
// or the call's stored result when it already has one (a retry, or a
// restart after the result was written).
func (a *Activities) begin(ctx context.Context, in ToolInput) (r runs.Run, snap runs.Snapshot, prev *ToolOutput, err error) {
	err = a.withConn(ctx, func(db store.DB) error {
		if tc, err := runs.StoredToolCall(ctx, db, in.RunID, in.Seq); err == nil {
			prev = &ToolOutput{Seq: tc.Seq, Result: tc.Result, Outcome: tc.Outcome, Stopped: budgetStopped(tc.Metadata)}
			return nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		var err error
		if r, err = runs.Load(ctx, db, in.RunID); err != nil {
			return err
		}
		if snap, err = a.snapshot(ctx, db, in.RunID); err != nil {
			return fmt.Errorf("load snapshot: %w", err)
		}
		return nil
	})
	return r, snap, prev, err
}

// saveCall stores a call's stamped result, its message, the budget and the
// audit event together (an audited call is a stored call), and forgets its
// sealed arguments.
func (a *Activities) saveCall(ctx context.Context, r runs.Run, in ToolInput, offered runs.OfferedTool, red *tools.Redactor,
	stamped, outcome string, meta map[string]any, started time.Time, hidden []string) (ToolOutput, error) {
	finished := time.Now()
	metaJSON := redactedJSON(red, meta)
	var tc runs.ToolCall
	err := pgx.BeginFunc(ctx, a.d.DB, func(tx pgx.Tx) error {
		var (
			err    error
			stored bool
		)
		tc, stored, err = runs.SaveToolCall(ctx, tx, runs.ToolCall{
			RunID: in.RunID, Seq: in.Seq, CallID: in.CallID, Tool: in.Name,
			Arguments: red.Redact(in.Arguments), Result: stamped, Outcome: outcome,
			StartedAt: started, FinishedAt: finished, DurationMS: int(finished.Sub(started).Milliseconds()),
			Metadata: metaJSON,
		})
		if err != nil {
			return err
		}
		if !stored {
			ev := callEvent(r, tc, auditKind(metaString(meta, "kind"), offered), offered.ConnectionID, in.ApprovalID)
			if err := audit.Record(ctx, tx, ev); err != nil {
				return err
			}
			if in.ApprovalID != "" { // the approved call's last step: its result is stored
				ev.Action, ev.Outcome = audit.ActionApproval, audit.ApprovalReturned
				if err := audit.Record(ctx, tx, ev); err != nil {
					return err
				}
			}
		}
		return runs.SetRemaining(ctx, tx, in.RunID, in.Remaining)
	})
	if err != nil {
		return ToolOutput{}, err
	}
	if len(hidden) > 0 {
		if err := a.d.Vault.Forget(ctx, in.RunID, in.Seq); err != nil {
			a.d.Log.WarnContext(ctx, "could not delete a call's sealed arguments", "run_id", in.RunID, "seq", in.Seq, "err", err)
		}
	}
	a.d.Log.InfoContext(ctx, "tool call", "run_id", in.RunID, "seq", in.Seq, "tool", in.Name,
		"outcome", tc.Outcome, "duration_ms", tc.DurationMS, "result_bytes", len(tc.Result))
	return ToolOutput{Seq: tc.Seq, Result: tc.Result, Outcome: tc.Outcome}, nil
}

// invoke runs the call and returns its stamped result, the only form stored,
// and how the call went.
func (a *Activities) invoke(ctx context.Context, r runs.Run, snap runs.Snapshot, in ToolInput, red *tools.Redactor) (stamped, outcome string, meta map[string]any) {
	meta = map[string]any{}
	stamp := func(raw string, filter func(string) string) string {
		return tools.Stamp(raw, tools.StampOptions{Filter: filter, Redactor: red, Remaining: in.Remaining, Log: a.d.Log})
	}
	offered, ok := snap.Tool(in.Name)
	if !ok {
		return stamp(tools.RefuseUnknown(in.Name), nil), runs.OutcomeRefused, meta
	}
	meta["kind"] = offered.Kind
	meta["class"] = offered.Class
	if why := a.overRate(ctx, r); why != "" {
		return stamp(tools.ErrorResult(why), nil), runs.OutcomeRefused, meta
	}
	args := json.RawMessage(strings.TrimSpace(in.Arguments))
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if !json.Valid(args) {
		return stamp(tools.ErrorResult("the arguments of this call were not valid JSON; call the tool again with a JSON object that matches its schema"), nil),
			runs.OutcomeError, meta
	}
	ctx, stop := a.watchProgress(ctx)
	defer stop()
	switch offered.Kind {
	case "native":
		t, ok := a.d.Tools.Lookup(in.Name)
		if !ok || a.nowOff(ctx, r, snap)[in.Name] { // no longer registered here, or turned off since the snapshot
			return stamp(tools.RefuseUnknown(in.Name), nil), runs.OutcomeRefused, meta
		}
		mctx, recorded := tools.WithMetadata(ctx)
		raw := a.d.Tools.Invoke(mctx, tools.Call{Name: in.Name, Args: args, RunID: r.ID, AgentID: r.AgentID,
			GuildID: r.GuildID, OrgID: r.OrganisationID, Trigger: r.Trigger, Seq: in.Seq, CallID: in.CallID})
		for k, v := range recorded() {
			if _, taken := meta[k]; !taken { // kind and class stay the platform's
				meta[k] = v
			}
		}
		return stamp(raw, t.Filter), outcomeOf(raw), meta
	case scripts.KindScript:
		// A script offered as a tool: validated against its parameters, run by script_run.
		meta["script"] = offered.RemoteName
		t, ok := a.d.Tools.Lookup(scripts.ToolRun)
		if !ok || a.nowOff(ctx, r, snap)[scripts.ToolRun] {
			return stamp(tools.RefuseUnknown(in.Name), nil), runs.OutcomeRefused, meta
		}
		runArgs, err := scripts.RunArgs(offered, args)
		if err != nil {
			return stamp(tools.ErrorResult(err.Error()), nil), runs.OutcomeError, meta
		}
		mctx, recorded := tools.WithMetadata(ctx)
		raw := a.d.Tools.Invoke(mctx, tools.Call{Name: scripts.ToolRun, Args: runArgs, RunID: r.ID, AgentID: r.AgentID,
			GuildID: r.GuildID, OrgID: r.OrganisationID, Trigger: r.Trigger, Seq: in.Seq, CallID: in.CallID})
		for k, v := range recorded() {
			if _, taken := meta[k]; !taken {
				meta[k] = v
			}
		}
		return stamp(raw, t.Filter), outcomeOf(raw), meta
	case "mcp":
		meta["server"] = offered.ServerSlug
		if why := a.remoteRefusal(ctx, r, offered); why != "" {
			return stamp(tools.ErrorResult(why), nil), runs.OutcomeRefused, meta
		}
		// An adapter that moves files (Qonto's upload_invoice) reaches the
		// run's agent workspace under the workspace file rules.
		stamped, outcome = a.callRemote(workspacefiles.With(ctx, a.d.Files, r.AgentID), r, in.Seq, offered, args, in.Remaining, red)
		return stamped, outcome, meta
	}
	return stamp(tools.RefuseUnknown(in.Name), nil), runs.OutcomeRefused, meta
}

// callEvent is a stored call's audit event: the digest of its arguments as
// stored (redacted, so a sealed value is never digested), never the
// arguments themselves.
// auditKind is the kind an audit event names: an adapter's tools are
// offered as remote tools and the code and browser tools as native ones;
// their class tells them apart.
func auditKind(kind string, t runs.OfferedTool) string {
	switch c := tools.Class(t.Class); c {
	case tools.ClassAdapter, tools.ClassCode, tools.ClassBrowser:
		return string(c)
	case tools.ClassShell:
		return string(tools.ClassCode) // the code tools' shell
	}
	return kind
}

func callEvent(r runs.Run, tc runs.ToolCall, kind, connectionID, approvalID string) audit.Event {
	digest, _ := approvals.Digest(json.RawMessage(tc.Arguments)) // "" for arguments that are not JSON
	return audit.Event{OrganisationID: r.OrganisationID, GuildID: r.GuildID, AgentID: r.AgentID, RunID: r.ID,
		Seq: tc.Seq, Trigger: r.Trigger, Action: audit.ActionToolCall, Tool: tc.Tool, Kind: kind,
		ConnectionID: connectionID, ArgsDigest: digest, Outcome: tc.Outcome, DurationMS: tc.DurationMS,
		ResultBytes: len(tc.Result), ApprovalID: approvalID, Actor: "agent:" + r.AgentID}
}

// unranEvent is the audit event of a call stored without running (refused
// over budget, denied, decided by the workflow): its kind and the login that
// would have served it are the offered tool's.
func unranEvent(r runs.Run, tc runs.ToolCall, snap runs.Snapshot, approvalID string) audit.Event {
	offered, _ := snap.Tool(tc.Tool)
	return callEvent(r, tc, auditKind(offered.Kind, offered), offered.ConnectionID, approvalID)
}

// redactedJSON encodes a call's metadata with the run's secrets redacted, as
// everything else stored about the call is.
func redactedJSON(red *tools.Redactor, meta map[string]any) json.RawMessage {
	raw, err := json.Marshal(meta)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	out := json.RawMessage(red.Redact(string(raw)))
	if !json.Valid(out) {
		return json.RawMessage(`{}`)
	}
	return out
}

func metaString(meta map[string]any, key string) string {
	s, _ := meta[key].(string)
	return s
}

func outcomeOf(raw string) string {
	if strings.HasPrefix(raw, "ERROR: ") {
		return runs.OutcomeError
	}
	return runs.OutcomeOK
}

// redactor loads the run's secrets here, inside the activity, so they never
// travel through the workflow; extra are values this call holds besides.
func (a *Activities) redactor(ctx context.Context, agentID string, extra ...string) (*tools.Redactor, error) {
	if a.d.Secrets == nil && len(extra) == 0 {
		return nil, nil
	}
	var secrets []string
	if a.d.Secrets != nil {
		var err error
		if secrets, err = a.d.Secrets.RunSecrets(ctx, agentID); err != nil {
			return nil, fmt.Errorf("load the run's redaction set: %w", err)
		}
	}
	return tools.NewRedactor(append(secrets, extra...), a.d.Log), nil
}

// revealArguments gives back the arguments the model activity sealed for a
// call to a sealed tool, and the values they hold; other calls keep theirs.
// What is stored of the call stays in.Arguments, the shown form.
func (a *Activities) revealArguments(ctx context.Context, in ToolInput) (ToolInput, []string, error) {
	if a.d.Vault == nil || !a.d.Vault.Sealed(in.Name) {
		return in, nil, nil
	}
	args, hidden, ok, err := a.d.Vault.Reveal(ctx, in.RunID, in.Seq, in.CallID)
	if err != nil {
		return in, nil, fmt.Errorf("open the sealed arguments of %s: %w", in.Name, err)
	}
	if ok {
		in.Arguments = args
	}
	return in, hidden, nil
}

// withConn runs fn on one connection of the pool, acquired once and
// released when fn returns.
func (a *Activities) withConn(ctx context.Context, fn func(store.DB) error) error {
	c, err := a.d.DB.Acquire(ctx)
	if err != nil {
		return store.Map(err)
	}
	defer c.Release()
	return fn(c)
}

// heartbeat keeps a long call alive on the server, so a lost worker is noticed
// within the heartbeat timeout instead of the whole call timeout.
func (a *Activities) heartbeat(ctx context.Context) func() {
	return a.heartbeatWith(ctx, nil)
}

// heartbeatWith is heartbeat carrying note's last progress.
func (a *Activities) heartbeatWith(ctx context.Context, note *progressNote) func() {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(a.d.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx, note.details()...)
			}
		}
	}()
	return func() { close(done) }
}

// ToolRecord stores a result the workflow decided without running the tool:
// a call over budget, or one whose activity was lost and is not retried. A
// result the tool itself managed to store first wins.
func (a *Activities) ToolRecord(ctx context.Context, in RecordInput) (ToolOutput, error) {
	r, err := runs.Load(ctx, a.d.DB, in.RunID)
	if err != nil {
		return ToolOutput{}, err
	}
	snap, err := a.snapshot(ctx, a.d.DB, in.RunID) // for the audit event's kind and login; none is no harm
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return ToolOutput{}, fmt.Errorf("load snapshot: %w", err)
	}
	red, err := a.redactor(ctx, r.AgentID)
	if err != nil {
		return ToolOutput{}, err
	}
	now := time.Now()
	stamped := tools.Stamp(tools.ErrorResult(in.Message), tools.StampOptions{Redactor: red, Remaining: in.Remaining, Log: a.d.Log})
	var tc runs.ToolCall
	err = pgx.BeginFunc(ctx, a.d.DB, func(tx pgx.Tx) error {
		var (
			err    error
			stored bool
		)
		tc, stored, err = runs.SaveToolCall(ctx, tx, runs.ToolCall{RunID: in.RunID, Seq: in.Seq, CallID: in.CallID,
			Tool: in.Name, Arguments: red.Redact(in.Arguments), Result: stamped, Outcome: in.Outcome,
			StartedAt: now, FinishedAt: now})
		if err != nil || stored {
			return err
		}
		return audit.Record(ctx, tx, unranEvent(r, tc, snap, in.ApprovalID))
	})
	if err != nil {
		return ToolOutput{}, err
	}
	if r.Status == runs.StatusWaiting {
		// The call waited (a task that ended badly, a denial): the run goes
		// on unless another of its calls still waits.
		if err := a.resumeIfNoneWaits(ctx, in.RunID); err != nil {
			return ToolOutput{}, err
		}
	}
	return ToolOutput{Seq: tc.Seq, Result: tc.Result, Outcome: tc.Outcome}, nil
}

// Finish records how the run ended.
func (a *Activities) Finish(ctx context.Context, in FinishInput) error {
	a.d.Log.InfoContext(ctx, "run finished", "run_id", in.RunID, "status", in.Status)
	telemetry.RunFinished(in.Status)
	if a.d.Vault != nil {
		// Sealed arguments of calls that never ran (over budget, interrupted).
		if err := a.d.Vault.Forget(ctx, in.RunID, 0); err != nil {
			return err
		}
	}
	if in.StopReason != "" {
		if err := runs.Stop(ctx, a.d.DB, in.RunID, in.StopSeq, in.StopMessage, in.StopReason); err != nil {
			return err
		}
	} else if err := runs.Finish(ctx, a.d.DB, in.RunID, in.Status, in.Error); err != nil {
		return err
	}
	// A run cancelled while it waited: its requests expire, each with its audit event.
	if err := pgx.BeginFunc(ctx, a.d.DB, func(tx pgx.Tx) error { return approvals.CloseRun(ctx, tx, in.RunID) }); err != nil {
		return err
	}
	if err := inputs.CloseRun(ctx, a.d.DB, in.RunID); err != nil {
		return err
	}
	a.endRepositories(ctx, in.RunID)
	return nil
}
