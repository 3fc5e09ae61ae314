package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// Tool runs one tool call: it looks the tool up in the run's snapshot,
// checks the arguments, invokes the native handler or the MCP session, puts
// the raw result through tools.Stamp with the run's redaction set, and stores
// only the stamped string. A call already stored (a retry, or a restart after
// the result was written) returns the stored result without running again.
func (a *Activities) Tool(ctx context.Context, in ToolInput) (ToolOutput, error) {
	if prev, err := runs.GetToolCall(ctx, a.d.DB, in.RunID, in.Seq); err == nil {
		return ToolOutput{Seq: prev.Seq, Result: prev.Result, Outcome: prev.Outcome}, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return ToolOutput{}, err
	}
	r, err := runs.Load(ctx, a.d.DB, in.RunID)
	if err != nil {
		return ToolOutput{}, err
	}
	snap, err := runs.SnapshotOf(ctx, a.d.DB, in.RunID)
	if err != nil {
		return ToolOutput{}, fmt.Errorf("load snapshot: %w", err)
	}
	red, err := a.redactor(ctx, r.AgentID)
	if err != nil {
		return ToolOutput{}, err
	}
	ctx = tools.WithLogRedactor(ctx, red) // failure detail the registry logs is redacted too
	started := time.Now()
	raw, outcome, filter, meta := a.invoke(ctx, r, snap, in)
	stamped := tools.Stamp(raw, tools.StampOptions{Filter: filter, Redactor: red, Remaining: in.Remaining, Log: a.d.Log})
	finished := time.Now()
	metaJSON := redactedJSON(red, meta)
	tc, _, err := runs.SaveToolCall(ctx, a.d.DB, runs.ToolCall{
		RunID: in.RunID, Seq: in.Seq, CallID: in.CallID, Tool: in.Name,
		Arguments: red.Redact(in.Arguments), Result: stamped, Outcome: outcome,
		StartedAt: started, FinishedAt: finished, DurationMS: int(finished.Sub(started).Milliseconds()),
		Metadata: metaJSON,
	})
	if err != nil {
		return ToolOutput{}, err
	}
	if err := runs.SetRemaining(ctx, a.d.DB, in.RunID, in.Remaining); err != nil {
		return ToolOutput{}, err
	}
	a.d.Log.InfoContext(ctx, "tool call", "run_id", in.RunID, "seq", in.Seq, "tool", in.Name,
		"outcome", tc.Outcome, "duration_ms", tc.DurationMS, "result_bytes", len(tc.Result))
	return ToolOutput{Seq: tc.Seq, Result: tc.Result, Outcome: tc.Outcome}, nil
}

// invoke returns the raw result, never stored as is, and how the call went.
func (a *Activities) invoke(ctx context.Context, r runs.Run, snap runs.Snapshot, in ToolInput) (raw, outcome string, filter func(string) string, meta map[string]any) {
	meta = map[string]any{}
	offered, ok := snap.Tool(in.Name)
	if !ok {
		return tools.RefuseUnknown(in.Name), runs.OutcomeRefused, nil, meta
	}
	meta["kind"] = offered.Kind
	meta["class"] = offered.Class
	args := json.RawMessage(strings.TrimSpace(in.Arguments))
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if !json.Valid(args) {
		return tools.ErrorResult("the arguments of this call were not valid JSON; call the tool again with a JSON object that matches its schema"),
			runs.OutcomeError, nil, meta
	}
	stop := a.heartbeat(ctx)
	defer stop()
	switch offered.Kind {
	case "native":
		t, ok := a.d.Tools.Lookup(in.Name)
		if !ok || a.nowOff(ctx, r, snap)[in.Name] { // no longer registered here, or turned off since the snapshot
			return tools.RefuseUnknown(in.Name), runs.OutcomeRefused, nil, meta
		}
		mctx, recorded := tools.WithMetadata(ctx)
		raw = a.d.Tools.Invoke(mctx, tools.Call{Name: in.Name, Args: args, RunID: r.ID, AgentID: r.AgentID,
			GuildID: r.GuildID, OrgID: r.OrganisationID, Trigger: r.Trigger})
		for k, v := range recorded() {
			if _, taken := meta[k]; !taken { // kind and class stay the platform's
				meta[k] = v
			}
		}
		return raw, outcomeOf(raw), t.Filter, meta
	case "mcp":
		meta["server"] = offered.ServerSlug
		if why := a.remoteRefusal(ctx, r, offered); why != "" {
			return tools.ErrorResult(why), runs.OutcomeRefused, nil, meta
		}
		raw = a.callMCP(ctx, r, offered, args)
		return raw, outcomeOf(raw), nil, meta
	}
	return tools.RefuseUnknown(in.Name), runs.OutcomeRefused, nil, meta
}

func (a *Activities) callMCP(ctx context.Context, r runs.Run, t runs.OfferedTool, args json.RawMessage) string {
	if a.d.MCP == nil {
		return tools.ErrorResult("remote tools are not available on this worker")
	}
	if len(t.Schema) > 0 {
		s, err := tools.CompileSchema(t.Schema)
		if err != nil {
			return tools.ErrorResult("the tool's schema does not compile: " + err.Error())
		}
		if args, err = s.Prepare(args); err != nil {
			return tools.ErrorResult(err.Error())
		}
	}
	out, err := a.d.MCP.Call(ctx, t.ConnectionID, t.RemoteName, args)
	if err != nil {
		// The message is stamped (redacted) by the caller; the detail is logged by id only.
		a.d.Log.WarnContext(ctx, "mcp call failed", "run_id", r.ID, "tool", t.Name, "connection_id", t.ConnectionID)
		return tools.ErrorResult(err.Error())
	}
	return out
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

func outcomeOf(raw string) string {
	if strings.HasPrefix(raw, "ERROR: ") {
		return runs.OutcomeError
	}
	return runs.OutcomeOK
}

// redactor loads the run's secrets here, inside the activity, so they never
// travel through the workflow.
func (a *Activities) redactor(ctx context.Context, agentID string) (*tools.Redactor, error) {
	if a.d.Secrets == nil {
		return nil, nil
	}
	secrets, err := a.d.Secrets.RunSecrets(ctx, agentID)
	if err != nil {
		return nil, fmt.Errorf("load the run's redaction set: %w", err)
	}
	return tools.NewRedactor(secrets, a.d.Log), nil
}

// heartbeat keeps a long call alive on the server, so a lost worker is noticed
// within the heartbeat timeout instead of the whole call timeout.
func (a *Activities) heartbeat(ctx context.Context) func() {
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
				activity.RecordHeartbeat(ctx)
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
	red, err := a.redactor(ctx, r.AgentID)
	if err != nil {
		return ToolOutput{}, err
	}
	now := time.Now()
	stamped := tools.Stamp(tools.ErrorResult(in.Message), tools.StampOptions{Redactor: red, Remaining: in.Remaining, Log: a.d.Log})
	tc, _, err := runs.SaveToolCall(ctx, a.d.DB, runs.ToolCall{RunID: in.RunID, Seq: in.Seq, CallID: in.CallID,
		Tool: in.Name, Arguments: red.Redact(in.Arguments), Result: stamped, Outcome: in.Outcome,
		StartedAt: now, FinishedAt: now})
	if err != nil {
		return ToolOutput{}, err
	}
	return ToolOutput{Seq: tc.Seq, Result: tc.Result, Outcome: tc.Outcome}, nil
}

// Finish records how the run ended.
func (a *Activities) Finish(ctx context.Context, in FinishInput) error {
	a.d.Log.InfoContext(ctx, "run finished", "run_id", in.RunID, "status", in.Status)
	return runs.Finish(ctx, a.d.DB, in.RunID, in.Status, in.Error)
}
