package group

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/guilds/guilds/internal/groupchat"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/worker"
	runwf "github.com/guilds/guilds/workflows/run"
)

// Service posts chat messages and starts their routing. Every way into the
// chat goes through it, so no message is stored without its Route.
type Service struct {
	DB        *pgxpool.Pool // for PostAgent, which opens its own transaction
	Temporal  client.Client
	TaskQueue string // "" means worker.TaskQueue
}

// ErrNoTemporal: the process has no Temporal client, so it cannot route.
var ErrNoTemporal = errors.New("the group chat needs Temporal, which this process is not connected to")

// StartRoute starts the Route workflow of a message. A Route already
// started for it (a retried post) is not an error: that is the
// exactly-once guarantee, not a failure.
func (s Service) StartRoute(ctx context.Context, m groupchat.Message) error {
	if s.Temporal == nil {
		return ErrNoTemporal
	}
	queue := s.TaskQueue
	if queue == "" {
		queue = worker.TaskQueue
	}
	opts := client.StartWorkflowOptions{
		ID:                       WorkflowID(m.ID),
		TaskQueue:                queue,
		WorkflowIDReusePolicy:    enumspb.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE,
		WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_FAIL,
		StaticSummary:            fmt.Sprintf("route chat message #%d by %s", m.Seq, m.Author.Name),
		Memo: map[string]any{"guild_id": m.GuildID, "message_id": m.ID, "seq": m.Seq,
			"author": m.Author.Name, "author_kind": m.Author.Kind, "hop": m.Hop},
		TypedSearchAttributes: temporal.NewSearchAttributes(runwf.SAGuild.ValueSet(m.GuildID)),
	}
	_, err := s.Temporal.ExecuteWorkflow(ctx, opts, WorkflowName, Params{MessageID: m.ID})
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if errors.As(err, &started) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("start the routing of chat message %s: %w", m.ID, err)
	}
	return nil
}

// PostOperator stores an operator's message in the request's transaction
// and starts its routing before the commit: when Temporal refuses, the
// message rolls back with the request; the Route retries until it commits.
func (s Service) PostOperator(ctx context.Context, tx pgx.Tx, guildID, userID, content string) (groupchat.Message, error) {
	if s.Temporal == nil {
		return groupchat.Message{}, ErrNoTemporal
	}
	m, _, err := groupchat.Post(ctx, tx, groupchat.NewMessage{GuildID: guildID,
		Author: groupchat.Author{Kind: groupchat.AuthorUser, UserID: userID}, Content: content})
	if err != nil {
		return groupchat.Message{}, err
	}
	return m, s.StartRoute(ctx, m)
}

// PostAgent stores an agent's message in a transaction of its own and
// starts its routing before the commit, as PostOperator does, so no message
// is ever stored without its Route. With a PostKey it is idempotent: a
// retry finds the committed message and its Route already started.
func (s Service) PostAgent(ctx context.Context, in groupchat.NewMessage) (groupchat.Message, error) {
	if s.DB == nil {
		return groupchat.Message{}, errors.New("the group chat service has no database")
	}
	if s.Temporal == nil {
		return groupchat.Message{}, ErrNoTemporal
	}
	in.Author.Kind = groupchat.AuthorAgent
	var m groupchat.Message
	post := func(tx pgx.Tx) error {
		var err error
		if m, _, err = groupchat.Post(ctx, tx, in); err != nil {
			return err
		}
		return s.StartRoute(ctx, m)
	}
	err := store.InTx(ctx, s.DB, post)
	if errors.Is(err, store.ErrConflict) && in.PostKey != "" {
		// A concurrent attempt with the same key committed first.
		err = store.InTx(ctx, s.DB, post)
	}
	if err != nil {
		return groupchat.Message{}, err
	}
	return m, nil
}
