package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/guilds/guilds/internal/budgets"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
	"github.com/guilds/guilds/worker"
)

// Search attributes set on every run, registered on the Temporal namespace
// (internal/devserver registers them on the dev server).
var (
	SAOrganisation = temporal.NewSearchAttributeKeyKeyword("GuildsOrganisation")
	SAGuild        = temporal.NewSearchAttributeKeyKeyword("GuildsGuild")
	SAAgent        = temporal.NewSearchAttributeKeyKeyword("GuildsAgent")
	SATrigger      = temporal.NewSearchAttributeKeyKeyword("GuildsTrigger")
)

// MaxMessage bounds the opening message of a run.
const MaxMessage = 100_000

// Input starts a run. The caller has checked that the agent is visible.
type Input struct {
	AgentID string
	Message string
	Trigger string // "direct" when empty
	Budget  int    // tool-call budget; 0 means runs.DefaultBudget
	// Models checks, before anything is stored, that some key can serve the
	// agent's model. Nil skips the check (the model activity fails instead).
	Models *models.Resolver
	// TaskQueue defaults to worker.TaskQueue.
	TaskQueue string
	// StartedBy is the user starting the run ("" for schedules and group
	// chat): the one a secret request of the run asks.
	StartedBy string
}

// WorkflowID is the Temporal workflow id of a run.
func WorkflowID(runID string) string { return "run-" + runID }

// Start stores a queued run with its opening message and starts its
// workflow. Call it inside the request's transaction: when the workflow
// cannot be started the error rolls the row back; the snapshot activity
// retries until the transaction has committed.
func Start(ctx context.Context, c client.Client, db store.DB, in Input) (string, error) {
	if c == nil {
		return "", fmt.Errorf("start run: no Temporal client")
	}
	if in.Trigger == "" {
		in.Trigger = runs.TriggerDirect
	}
	if in.Budget == 0 {
		in.Budget = runs.DefaultBudget
	}
	in.Message = strings.TrimSpace(in.Message)
	var probs validation.Problems
	probs.Check(in.Message != "", "message", "is required")
	probs.Check(len(in.Message) <= MaxMessage, "message", "must be at most %d bytes", MaxMessage)
	probs.Check(utf8.ValidString(in.Message), "message", "must be UTF-8 text")
	probs.Check(runs.ValidTrigger(in.Trigger), "trigger", "must be direct, group or schedule")
	probs.Check(in.Budget >= 1 && in.Budget <= runs.MaxBudget, "budget", "must be between 1 and %d", runs.MaxBudget)
	if err := probs.Err(); err != nil {
		return "", err
	}
	agent, err := orgs.LoadAgent(ctx, db, in.AgentID)
	if err != nil {
		return "", err
	}
	if err := budgets.Refuse(ctx, db, budgets.Subject{OrganisationID: agent.OrganisationID, GuildID: agent.GuildID,
		AgentID: agent.ID}, budgets.ForStart, time.Now()); err != nil {
		return "", err // a *budgets.ReachedError names the limit
	}
	model := agent.Model
	if in.Models != nil {
		t, err := in.Models.Resolve(ctx, db, agent.OrganisationID, agent.Model)
		if err != nil {
			return "", err
		}
		model = t.Qualified()
	}
	r, err := runs.Create(ctx, db, runs.NewRun{AgentID: agent.ID, GuildID: agent.GuildID,
		OrganisationID: agent.OrganisationID, Trigger: in.Trigger, Model: model, Budget: in.Budget, Message: in.Message,
		StartedBy: in.StartedBy})
	if err != nil {
		return "", err
	}
	queue := in.TaskQueue
	if queue == "" {
		queue = worker.TaskQueue
	}
	opts := client.StartWorkflowOptions{
		ID:            WorkflowID(r.ID),
		TaskQueue:     queue,
		StaticSummary: fmt.Sprintf("run of %s (%s)", agent.Name, in.Trigger),
		Memo:          map[string]any{"agent": agent.Name, "run_id": r.ID},
		Priority:      Priority(agent.OrganisationID, in.Trigger),
		TypedSearchAttributes: temporal.NewSearchAttributes(
			SAOrganisation.ValueSet(agent.OrganisationID),
			SAGuild.ValueSet(agent.GuildID),
			SAAgent.ValueSet(agent.ID),
			SATrigger.ValueSet(in.Trigger),
		),
	}
	_, err = c.ExecuteWorkflow(ctx, opts, WorkflowName, Params{RunID: r.ID, AgentID: agent.ID, GuildID: agent.GuildID,
		OrganisationID: agent.OrganisationID, Trigger: in.Trigger})
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) && strings.Contains(strings.ToLower(invalid.Error()), "search attribute") {
		// Removed from the namespace since start-up registered them.
		return "", fmt.Errorf("%w: %s", ErrSearchAttributesMissing, invalid.Error())
	}
	if err != nil {
		return "", fmt.Errorf("start run workflow: %w", err)
	}
	return r.ID, nil
}

// ErrSearchAttributesMissing: the namespace lacks the search attributes a
// run is started with; restarting serve or worker registers them.
var ErrSearchAttributesMissing = errors.New("the Temporal namespace lacks the Guilds search attributes: restart guilds serve or guilds worker, which register them, or create them with `temporal operator search-attribute create`")

// Cancel asks Temporal to cancel a run's workflow; the workflow records the
// cancelled status itself.
func Cancel(ctx context.Context, c client.Client, runID string) error {
	return c.CancelWorkflow(ctx, WorkflowID(runID), "")
}
