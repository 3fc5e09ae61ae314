package run

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/budgets"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/internal/usage"
)

// The budgets of a run's organisation, guild and agent (issue 33,
// docs/adr/0516-budgets.md). A call is weighed against the tool-call limits
// before it runs, a model turn against the token and money limits before
// the provider is asked; each check is one query. A reached limit ends the
// run: the refused call's result names the limit, no further model turn is
// made, and the workflow closes the run with a message saying why.

// budgetKey marks, in a refused call's metadata, the limit that refused it,
// so a retried activity that finds the stored call still stops the run.
const budgetKey = "budget_reached"

// StopReasonBudget prefixes the stop reason of a run a budget ended.
const StopReasonBudget = "budget_reached"

func subjectOf(r runs.Run) budgets.Subject {
	return budgets.Subject{OrganisationID: r.OrganisationID, GuildID: r.GuildID, AgentID: r.AgentID}
}

// toolBudget refuses the call when a tool-call limit of the run's scopes is
// reached: the refusal is stored (with its audit event, as refused, which
// does not count) and returned with Stopped set. Nil: the call may run.
func (a *Activities) toolBudget(ctx context.Context, r runs.Run, snap runs.Snapshot, in ToolInput) (*ToolOutput, error) {
	reach, err := budgets.Check(ctx, a.d.DB, subjectOf(r), budgets.ForToolCall, time.Now())
	if err != nil || reach == nil {
		return nil, err
	}
	why := reach.Message()
	red, err := a.redactor(ctx, r.AgentID)
	if err != nil {
		return nil, err
	}
	meta, _ := json.Marshal(map[string]any{budgetKey: why, "limit": reach.Limit, "scope": reach.Scope})
	now := time.Now()
	stamped := tools.Stamp(tools.ErrorResult("this call did not run: "+why+". The run stops here."),
		tools.StampOptions{Redactor: red, Remaining: in.Remaining, Log: a.d.Log})
	var tc runs.ToolCall
	err = pgx.BeginFunc(ctx, a.d.DB, func(tx pgx.Tx) error {
		var (
			err    error
			stored bool
		)
		tc, stored, err = runs.SaveToolCall(ctx, tx, runs.ToolCall{RunID: in.RunID, Seq: in.Seq, CallID: in.CallID,
			Tool: in.Name, Arguments: red.Redact(in.Arguments), Result: stamped, Outcome: runs.OutcomeRefused,
			StartedAt: now, FinishedAt: now, Metadata: meta})
		if err != nil || stored {
			return err
		}
		return audit.Record(ctx, tx, unranEvent(r, tc, snap, in.ApprovalID))
	})
	if err != nil {
		return nil, err
	}
	a.d.Log.InfoContext(ctx, "tool call refused: budget reached", "run_id", r.ID, "seq", in.Seq, "tool", in.Name,
		"scope", reach.Scope, "limit", reach.Limit)
	return &ToolOutput{Seq: tc.Seq, Result: tc.Result, Outcome: tc.Outcome, Stopped: budgetStopped(tc.Metadata)}, nil
}

// budgetStopped is the reached limit a stored call was refused for, or "".
func budgetStopped(meta json.RawMessage) string {
	var m map[string]any
	if len(meta) == 0 || json.Unmarshal(meta, &m) != nil {
		return ""
	}
	s, _ := m[budgetKey].(string)
	return s
}

// modelBudget says which token or money limit forbids another model turn,
// or "".
func (a *Activities) modelBudget(ctx context.Context, r runs.Run) (string, error) {
	reach, err := budgets.Check(ctx, a.d.DB, subjectOf(r), budgets.ForModelTurn, time.Now())
	if err != nil || reach == nil {
		return "", err
	}
	a.d.Log.InfoContext(ctx, "model turn refused: budget reached", "run_id", r.ID, "scope", reach.Scope, "limit", reach.Limit)
	return reach.Message(), nil
}

// storeTurn stores the turn's answer and the usage the provider reported
// for it in one transaction, both keyed by (run, seq): a turn whose answer
// is stored has its usage stored.
func (a *Activities) storeTurn(ctx context.Context, r runs.Run, target models.Target, msg runs.Message, u models.Usage) (runs.Message, error) {
	var stored runs.Message
	err := pgx.BeginFunc(ctx, a.d.DB, func(tx pgx.Tx) error {
		var err error
		if stored, err = runs.AppendMessage(ctx, tx, msg); err != nil {
			return err
		}
		return usage.RecordTurn(ctx, tx, usage.Turn{RunID: r.ID, Seq: msg.Seq, OrganisationID: r.OrganisationID,
			GuildID: r.GuildID, AgentID: r.AgentID, Provider: target.Provider, Model: target.Model,
			PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens})
	})
	return stored, err
}

// StopMessage is the closing message of a run a budget stopped.
func StopMessage(why string) string {
	return "This run stopped: " + why + "."
}
