// Package run is the durable run of an agent: the workflow that alternates
// model turns and tool calls until the model answers without calling a tool,
// the tool-call budget is spent, or an operator cancels it. Every model turn
// and every tool call is an activity, so each shows in the Temporal UI under
// the run's workflow id (run-<id>) with the tool's name as its summary.
package run

import (
	"errors"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/tools"
)

// WorkflowName is the registered name; it never changes with Go renames.
const WorkflowName = "run"

// Params is the workflow input: ids only. State is set when the run
// continues as new.
type Params struct {
	RunID          string `json:"run_id"`
	AgentID        string `json:"agent_id"`
	GuildID        string `json:"guild_id"`
	OrganisationID string `json:"organisation_id"`
	Trigger        string `json:"trigger"`
	State          *State `json:"state,omitempty"`
}

// State is what a run carries into its next execution.
type State struct {
	SnapshotID string           `json:"snapshot_id"`
	Tools      []runact.ToolRef `json:"tools"`
	Seq        int              `json:"seq"`       // last message seq written
	Remaining  int              `json:"remaining"` // tool calls left
	Turns      int              `json:"turns"`     // model turns so far, over all executions
}

// Result is how the run ended.
type Result struct {
	Status    string `json:"status"`
	Text      string `json:"text"`
	Turns     int    `json:"turns"`
	Remaining int    `json:"remaining"`
	// Stopped names the budget that ended the run, when one did.
	Stopped string `json:"stopped,omitempty"`
}

// budgetSpent is the result of a call the model made after the budget ran out.
const budgetSpent = "the tool-call budget of this run is spent; this call did not run. Answer with what you have"

// interrupted is the result of a call whose activity was lost or failed and
// that is not retried because it may have had side effects.
const interrupted = "this call was interrupted before it reported a result and was not retried, because it may have had side effects; check its effect before calling it again"

// Workflow runs the model and tool loop.
func Workflow(ctx workflow.Context, p Params) (Result, error) {
	log := workflow.GetLogger(ctx)
	st := State{}
	if p.State != nil {
		st = *p.State
	}
	finish := func(status, msg string) {
		// A cancelled run still records its ending.
		dctx, _ := workflow.NewDisconnectedContext(ctx)
		dctx = workflow.WithActivityOptions(dctx, bookkeepingOptions)
		if err := workflow.ExecuteActivity(dctx, runact.FinishName, runact.FinishInput{RunID: p.RunID, Status: status, Error: msg}).Get(dctx, nil); err != nil {
			log.Error("could not record the end of the run", "run_id", p.RunID, "error", err)
		}
	}
	fail := func(err error) (Result, error) {
		if temporal.IsCanceledError(err) || errors.Is(ctx.Err(), workflow.ErrCanceled) {
			finish(runs.StatusCancelled, "cancelled by an operator")
			return Result{Status: runs.StatusCancelled, Turns: st.Turns, Remaining: st.Remaining}, temporal.NewCanceledError()
		}
		finish(runs.StatusFailed, failureMessage(err))
		return Result{Status: runs.StatusFailed, Turns: st.Turns, Remaining: st.Remaining}, err
	}

	if st.SnapshotID == "" {
		var snap runact.SnapshotOutput
		sctx := workflow.WithActivityOptions(ctx, snapshotOptions)
		if err := workflow.ExecuteActivity(sctx, runact.SnapshotName, runact.SnapshotInput{RunID: p.RunID}).Get(sctx, &snap); err != nil {
			return fail(err)
		}
		st.SnapshotID, st.Tools, st.Remaining = snap.SnapshotID, snap.Tools, snap.Remaining
		st.Seq = 1 // the opening user message
	}
	refs := make(map[string]runact.ToolRef, len(st.Tools))
	for _, t := range st.Tools {
		refs[t.Name] = t
	}

	waits := newApprovalWaits(ctx)
	turnsHere := 0
	for {
		final := st.Remaining <= 0
		mopts := modelOptions
		mopts.Summary = fmt.Sprintf("model turn %d", st.Turns+1)
		mctx := workflow.WithActivityOptions(ctx, mopts)
		var out runact.ModelOutput
		err := workflow.ExecuteActivity(mctx, runact.ModelName, runact.ModelInput{RunID: p.RunID, Seq: st.Seq + 1, Final: final}).Get(mctx, &out)
		if err != nil {
			return fail(err)
		}
		if out.Stopped != "" {
			return stopped(ctx, p.RunID, st, st.Seq+1, out.Stopped), nil
		}
		st.Seq = out.Seq
		st.Turns++
		turnsHere++
		if len(out.Calls) == 0 || final {
			finish(runs.StatusCompleted, "")
			return Result{Status: runs.StatusCompleted, Text: out.Text, Turns: st.Turns, Remaining: st.Remaining}, nil
		}

		// The calls of one turn run concurrently; results are stored at the
		// seqs that follow the assistant message, in the order the model
		// listed them, so the transcript reads the same whatever finishes first.
		futures := make([]workflow.Future, len(out.Calls))
		inputs := make([]runact.ToolInput, len(out.Calls))
		for i, c := range out.Calls {
			in := runact.ToolInput{RunID: p.RunID, Seq: st.Seq + 1 + i, CallID: c.ID, Name: c.Name, Arguments: c.Arguments}
			if st.Remaining <= 0 {
				in.Remaining = 0
				inputs[i] = in
				futures[i] = record(ctx, in, runs.OutcomeRefused, budgetSpent)
				continue
			}
			st.Remaining--
			in.Remaining = st.Remaining
			inputs[i] = in
			futures[i] = executeTool(ctx, refs, in)
		}
		var asked []askedCall
		over := "" // a budget refused a call of this turn: the run ends after it
		for i, f := range futures {
			var res runact.ToolOutput
			if err := f.Get(ctx, &res); err != nil {
				if ctx.Err() != nil {
					return fail(ctx.Err())
				}
				log.Warn("tool call lost", "run_id", p.RunID, "tool", inputs[i].Name, "seq", inputs[i].Seq, "error", err)
				if err := record(ctx, inputs[i], runs.OutcomeInterrupted, interrupted).Get(ctx, nil); err != nil {
					return fail(err)
				}
				continue
			}
			if res.Approval != nil || res.Suspend != nil || res.Task != nil {
				asked = append(asked, askedCall{in: inputs[i], ask: res.Approval, suspend: res.Suspend, task: res.Task})
			}
			if res.Stopped != "" && over == "" {
				over = res.Stopped
			}
		}
		if over != "" {
			if err := refuseAsked(ctx, asked, over); err != nil {
				return fail(err)
			}
			asked = nil
		}
		if len(asked) > 0 {
			// Calls that must wait for a person, or for their server's
			// task, wait together in the workflow: no activity and no
			// worker is held meanwhile.
			if err := waits.all(ctx, refs, asked); err != nil {
				return fail(err)
			}
		}
		st.Seq += len(out.Calls)
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		if over == "" {
			over = waits.stopped
		}
		if over != "" {
			return stopped(ctx, p.RunID, st, st.Seq+1, over), nil
		}

		info := workflow.GetInfo(ctx)
		if turnsHere >= maxTurnsPerExecution || info.GetCurrentHistoryLength() >= maxHistoryEvents ||
			info.GetCurrentHistorySize() >= maxHistoryBytesBefore {
			next := p
			next.State = &st
			return Result{}, workflow.NewContinueAsNewError(ctx, WorkflowName, next)
		}
	}
}

// fastPathChange versions the fast path: a history whose calls were all
// scheduled as activities (recorded before it, or by a worker without it
// during a rolling deploy) replays as activities.
const fastPathChange = "quick-tools-local"

// fastPath reports whether this execution runs quick calls as local
// activities. It records its marker at the first quick call only, so a run
// that makes none has the history it always had.
func fastPath(ctx workflow.Context) bool {
	return workflow.GetVersion(ctx, fastPathChange, workflow.DefaultVersion, 1) == 1
}

// executeTool schedules one call: quick idempotent native tools as local
// activities, the rest as activities with their class's options.
func executeTool(ctx workflow.Context, refs map[string]runact.ToolRef, in runact.ToolInput) workflow.Future {
	ref, ok := refs[in.Name]
	class := tools.Class(ref.Class)
	if !ok {
		class = tools.ClassDefault // the activity refuses the name
	}
	if ok && ref.Quick && ref.Idempotent && fastPath(ctx) {
		lctx := workflow.WithLocalActivityOptions(ctx, quickToolOptions(in.Name))
		return workflow.ExecuteLocalActivity(lctx, runact.ToolLocalName, in)
	}
	tctx := workflow.WithActivityOptions(ctx, toolOptions(class, ref.Idempotent, in.Name, in.Arguments))
	return workflow.ExecuteActivity(tctx, runact.ToolName, in)
}

// record stores a result the workflow decides itself.
func record(ctx workflow.Context, in runact.ToolInput, outcome, msg string) workflow.Future {
	opts := bookkeepingOptions
	opts.Summary = "tool " + in.Name + " (" + outcome + ")"
	rctx := workflow.WithActivityOptions(ctx, opts)
	return workflow.ExecuteActivity(rctx, runact.ToolRecordName, runact.RecordInput{ToolInput: in, Outcome: outcome, Message: msg})
}
