// Package group holds the activities of a chat message's routing: decide
// (who answers and with how much history, stored once per message), deliver
// (create a recipient's group-triggered run, once per message and agent) and
// answer (post a run's final answer into the chat, once per run). Each is
// keyed by what it writes, so a retried or repeated activity finds its own
// earlier row instead of writing a second.
package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/guilds/guilds/internal/budgets"
	"github.com/guilds/guilds/internal/groupchat"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// Registered activity names; they never change with Go renames.
const (
	DecideName  = "group_decide"
	DeliverName = "group_deliver"
	AnswerName  = "group_answer"
)

// ErrTypeMessageGone: the message to route does not exist (its request
// rolled back, or the guild was deleted).
const ErrTypeMessageGone = "GroupMessageGone"

// Poster posts an agent's message and starts its routing
// (workflows/group.Service).
type Poster interface {
	PostAgent(ctx context.Context, in groupchat.NewMessage) (groupchat.Message, error)
}

// SecretSource gives the run's redaction set (the run activities' sources).
type SecretSource interface {
	RunSecrets(ctx context.Context, agentID string) ([]string, error)
}

// Deps are what the activities need; main builds them.
type Deps struct {
	DB *pgxpool.Pool
	// Decider routes: its Router is set when the group-routing integration is on.
	Decider groupchat.Decider
	// Models resolves a recipient's model when its run is created; nil
	// stores the agent's model as written.
	Models  *models.Resolver
	Poster  Poster
	Secrets SecretSource // nil: answers are posted unredacted
	Log     *slog.Logger
}

// Activities are the routing activities; build them with New.
type Activities struct{ d Deps }

// New builds the activities.
func New(d Deps) *Activities {
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Decider.Log == nil {
		d.Decider.Log = d.Log
	}
	return &Activities{d: d}
}

// DecideInput names the message to route.
type DecideInput struct {
	MessageID string `json:"message_id"`
}

// DecideOutput is the stored decision with what the workflow needs of the message.
type DecideOutput struct {
	GuildID string          `json:"guild_id"`
	Seq     int64           `json:"seq"`
	Route   groupchat.Route `json:"route"`
}

// Decide returns the message's routing decision, deciding and storing it
// the first time. A message not committed yet (its request's transaction)
// is a retried error; a message that never commits ends the routing.
func (a *Activities) Decide(ctx context.Context, in DecideInput) (DecideOutput, error) {
	m, err := groupchat.Get(ctx, a.d.DB, in.MessageID)
	if errors.Is(err, store.ErrNotFound) {
		if activity.IsActivity(ctx) && activity.GetInfo(ctx).Attempt >= messageAttempts {
			return DecideOutput{}, temporal.NewNonRetryableApplicationError("the message was never stored", ErrTypeMessageGone, err)
		}
		return DecideOutput{}, fmt.Errorf("message %s is not visible yet: %w", in.MessageID, err)
	}
	if err != nil {
		return DecideOutput{}, err
	}
	out := DecideOutput{GuildID: m.GuildID, Seq: m.Seq}
	if m.Route != nil {
		out.Route = *m.Route
		return out, nil
	}
	r, err := a.d.Decider.Decide(ctx, a.d.DB, m)
	if err != nil {
		return DecideOutput{}, err
	}
	if out.Route, err = groupchat.RecordRoute(ctx, a.d.DB, m.ID, r); err != nil {
		return DecideOutput{}, err
	}
	a.d.Log.InfoContext(ctx, "chat message routed", "message_id", m.ID, "method", out.Route.Method,
		"recipients", len(out.Route.Recipients))
	return out, nil
}

// messageAttempts: after this many attempts a message still not visible is
// taken for one whose request rolled back.
const messageAttempts = 8

// DeliverInput is one recipient of a message.
type DeliverInput struct {
	MessageID string `json:"message_id"`
	AgentID   string `json:"agent_id"`
	History   int    `json:"history"`
}

// DeliverOutput is the run the recipient was given, or why none.
type DeliverOutput struct {
	RunID          string `json:"run_id,omitempty"`
	AgentID        string `json:"agent_id"`
	AgentName      string `json:"agent_name,omitempty"`
	GuildID        string `json:"guild_id,omitempty"`
	OrganisationID string `json:"organisation_id,omitempty"`
	Skipped        string `json:"skipped,omitempty"`
}

// Deliver creates the recipient's group-triggered run, whose opening
// message is the selected history, and the delivery row naming it, in one
// transaction: however often it is retried, one run per message and agent.
func (a *Activities) Deliver(ctx context.Context, in DeliverInput) (DeliverOutput, error) {
	var out DeliverOutput
	err := store.InTx(ctx, a.d.DB, func(tx pgx.Tx) error {
		var err error
		out, err = a.deliver(ctx, tx, in)
		return err
	})
	if errors.Is(err, store.ErrConflict) {
		// A concurrent attempt committed first.
		d, ferr := groupchat.FindDelivery(ctx, a.d.DB, in.MessageID, in.AgentID)
		if ferr != nil {
			return DeliverOutput{}, ferr
		}
		return a.outputOf(ctx, d)
	}
	return out, err
}

func (a *Activities) deliver(ctx context.Context, tx pgx.Tx, in DeliverInput) (DeliverOutput, error) {
	if d, err := groupchat.FindDelivery(ctx, tx, in.MessageID, in.AgentID); err == nil {
		return a.outputOf(ctx, d)
	} else if !errors.Is(err, store.ErrNotFound) {
		return DeliverOutput{}, err
	}
	m, err := groupchat.Get(ctx, tx, in.MessageID)
	if err != nil {
		return DeliverOutput{}, err
	}
	agent, err := orgs.LoadAgent(ctx, tx, in.AgentID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && agent.GuildID != m.GuildID) {
		return DeliverOutput{AgentID: in.AgentID, Skipped: "the agent is no longer in the guild"}, nil
	}
	if err != nil {
		return DeliverOutput{}, err
	}
	skip := func(reason string) (DeliverOutput, error) {
		a.d.Log.InfoContext(ctx, "chat recipient got no run", "message_id", m.ID, "agent_id", agent.ID, "reason", reason)
		return DeliverOutput{AgentID: agent.ID, AgentName: agent.Name, Skipped: reason},
			groupchat.RecordDelivery(ctx, tx, groupchat.Delivery{MessageID: m.ID, AgentID: agent.ID, Skipped: reason})
	}
	budget := a.d.Decider.Limits.WithDefaults().RunsPerExchange
	if used, room, err := groupchat.ExchangeHasRoom(ctx, tx, m.ID, budget); err != nil {
		return DeliverOutput{}, err
	} else if !room {
		return skip(fmt.Sprintf("no run: this exchange has started %d runs, the most one operator message may set off (GUILDS_GROUP_RUNS_PER_EXCHANGE)", used))
	}
	if reach, err := budgets.Check(ctx, tx, budgets.Subject{OrganisationID: agent.OrganisationID, GuildID: agent.GuildID,
		AgentID: agent.ID}, budgets.ForStart, time.Now()); err != nil {
		return DeliverOutput{}, err
	} else if reach != nil {
		return skip("no run: " + reach.Message())
	}
	model := agent.Model
	if a.d.Models != nil {
		t, err := a.d.Models.Resolve(ctx, tx, agent.OrganisationID, agent.Model)
		if err != nil {
			return skip(fmt.Sprintf("no run: %v", err))
		}
		model = t.Qualified()
	}
	history, err := groupchat.History(ctx, tx, m.GuildID, m.Seq, max(in.History, 1))
	if err != nil {
		return DeliverOutput{}, err
	}
	r, err := runs.Create(ctx, tx, runs.NewRun{AgentID: agent.ID, GuildID: agent.GuildID, OrganisationID: agent.OrganisationID,
		Trigger: runs.TriggerGroup, Model: model, Budget: runs.DefaultBudget, Message: groupchat.Opening(agent.Name, history, m)})
	if err != nil {
		return DeliverOutput{}, err
	}
	if err := groupchat.RecordDelivery(ctx, tx, groupchat.Delivery{MessageID: m.ID, AgentID: agent.ID, RunID: r.ID}); err != nil {
		return DeliverOutput{}, err
	}
	return DeliverOutput{RunID: r.ID, AgentID: agent.ID, AgentName: agent.Name, GuildID: agent.GuildID,
		OrganisationID: agent.OrganisationID}, nil
}

func (a *Activities) outputOf(ctx context.Context, d groupchat.Delivery) (DeliverOutput, error) {
	agent, err := orgs.LoadAgent(ctx, a.d.DB, d.AgentID)
	if err != nil {
		return DeliverOutput{}, err
	}
	out := DeliverOutput{RunID: d.RunID, AgentID: agent.ID, AgentName: agent.Name, Skipped: d.Skipped}
	if d.RunID != "" {
		out.GuildID, out.OrganisationID = agent.GuildID, agent.OrganisationID
	}
	return out, nil
}

// AnswerInput is a finished group-triggered run's final answer.
type AnswerInput struct {
	MessageID string `json:"message_id"` // the message the run answered
	RunID     string `json:"run_id"`
	Text      string `json:"text"`
}

// AnswerOutput names the posted message ("" when the answer was empty).
type AnswerOutput struct {
	MessageID string `json:"message_id,omitempty"`
	Seq       int64  `json:"seq,omitempty"`
}

// Answer posts the run's final answer as the agent's message, redacted with
// the run's redaction set like a tool result, one hop further from the
// operator than the message it answers; its routing starts with it.
func (a *Activities) Answer(ctx context.Context, in AnswerInput) (AnswerOutput, error) {
	r, err := runs.Load(ctx, a.d.DB, in.RunID)
	if err != nil {
		return AnswerOutput{}, err
	}
	parent, err := groupchat.Get(ctx, a.d.DB, in.MessageID)
	if err != nil {
		return AnswerOutput{}, err
	}
	text, err := a.redact(ctx, r.AgentID, in.Text)
	if err != nil {
		return AnswerOutput{}, err
	}
	text = clipMessage(text)
	if text == "" {
		return AnswerOutput{}, nil
	}
	if a.d.Poster == nil {
		return AnswerOutput{}, errors.New("this worker cannot post into the group chat")
	}
	m, err := a.d.Poster.PostAgent(ctx, groupchat.NewMessage{GuildID: parent.GuildID,
		Author: groupchat.Author{Kind: groupchat.AuthorAgent, AgentID: r.AgentID}, Content: text,
		RunID: r.ID, ParentID: parent.ID, Hop: parent.Hop + 1, PostKey: "run:" + r.ID + ":answer"})
	if err != nil {
		return AnswerOutput{}, err
	}
	return AnswerOutput{MessageID: m.ID, Seq: m.Seq}, nil
}

func (a *Activities) redact(ctx context.Context, agentID, text string) (string, error) {
	if a.d.Secrets == nil {
		return text, nil
	}
	secrets, err := a.d.Secrets.RunSecrets(ctx, agentID)
	if err != nil {
		return "", fmt.Errorf("load the run's redaction set: %w", err)
	}
	return tools.NewRedactor(secrets, a.d.Log).Redact(text), nil
}
