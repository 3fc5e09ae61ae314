package groupchat

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/store"
)

// Limits bound what agents answering agents can set off, beside the hop
// bound: the runs one exchange (an operator message and every message that
// follows from it) may start, the group_post calls of one run, and the
// agent-authored messages of a guild per minute (docs/adr/0802).
type Limits struct {
	RunsPerExchange        int // GUILDS_GROUP_RUNS_PER_EXCHANGE
	PostsPerRun            int // GUILDS_GROUP_POSTS_PER_RUN
	AgentMessagesPerMinute int // GUILDS_GROUP_AGENT_MESSAGES_PER_MINUTE
	// Window is the rate's period: a minute unless a test sets it.
	Window time.Duration
}

// Defaults of Limits.
const (
	DefaultRunsPerExchange        = 12
	DefaultPostsPerRun            = 5
	DefaultAgentMessagesPerMinute = 30
)

// WithDefaults fills the zero fields.
func (l Limits) WithDefaults() Limits {
	if l.RunsPerExchange <= 0 {
		l.RunsPerExchange = DefaultRunsPerExchange
	}
	if l.PostsPerRun <= 0 {
		l.PostsPerRun = DefaultPostsPerRun
	}
	if l.AgentMessagesPerMinute <= 0 {
		l.AgentMessagesPerMinute = DefaultAgentMessagesPerMinute
	}
	if l.Window <= 0 {
		l.Window = time.Minute
	}
	return l
}

// Routing methods of the limits.
const (
	MethodRunBudget = "run_budget" // the exchange started all the runs it may
	MethodRateLimit = "rate_limit" // the guild's agents posted too much in the last minute
)

// RunsInExchange counts the runs started by deliveries of every message of
// the exchange message belongs to.
func RunsInExchange(ctx context.Context, db store.DB, messageID string) (int, error) {
	var n int
	err := db.QueryRow(ctx, `WITH root AS (SELECT coalesce(root_id, id) AS id FROM group_messages WHERE id = $1)
		SELECT count(*) FROM group_deliveries d JOIN group_messages g ON g.id = d.message_id, root
		WHERE d.run_id IS NOT NULL AND (g.id = root.id OR g.root_id = root.id)`, messageID).Scan(&n)
	return n, store.Map(err)
}

// ExchangeHasRoom locks the exchange message belongs to (its first
// message's row) for the rest of tx and reports whether it may start one
// more run: concurrent deliveries of the same exchange count one after the
// other, so the budget holds exactly. The caller records its delivery in tx.
func ExchangeHasRoom(ctx context.Context, tx pgx.Tx, messageID string, budget int) (used int, room bool, err error) {
	if _, err := tx.Exec(ctx, `SELECT 1 FROM group_messages WHERE id =
		(SELECT coalesce(root_id, id) FROM group_messages WHERE id = $1) FOR UPDATE`, messageID); err != nil {
		return 0, false, store.Map(err)
	}
	used, err = RunsInExchange(ctx, tx, messageID)
	return used, used < budget, err
}

// RecentAgentMessages counts the agent-authored messages of a guild posted
// within window, leaving out the one stored under exceptKey.
func RecentAgentMessages(ctx context.Context, db store.DB, guildID string, window time.Duration, exceptKey string) (int, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT count(*) FROM group_messages WHERE guild_id = $1 AND author_kind = 'agent'
		AND created_at > now() - make_interval(secs => $2) AND ($3::text IS NULL OR post_key IS DISTINCT FROM $3)`,
		guildID, window.Seconds(), nullable(exceptKey)).Scan(&n)
	return n, store.Map(err)
}

// RunPosts counts the messages a run posted with group_post (its final
// answer, posted for it, is not one), leaving out the one under exceptKey.
func RunPosts(ctx context.Context, db store.DB, runID, exceptKey string) (int, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT count(*) FROM group_messages WHERE run_id = $1
		AND post_key LIKE 'run:%:call:%' AND ($2::text IS NULL OR post_key <> $2)`, runID, nullable(exceptKey)).Scan(&n)
	return n, store.Map(err)
}

// Posted reports whether a message was stored under key (a retried writer).
func Posted(ctx context.Context, db store.DB, key string) (bool, error) {
	_, err := byPostKey(ctx, db, key)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return false, err
}

// limitRoute bounds a route decided for m: nobody answers an agent message
// past the guild's rate, and an exchange starts at most RunsPerExchange runs
// (recipients past the budget are dropped, named in the note).
func (d Decider) limitRoute(ctx context.Context, db store.DB, m Message, r Route) (Route, error) {
	lim := d.Limits.WithDefaults()
	if m.Author.Kind == AuthorAgent {
		n, err := RecentAgentMessages(ctx, db, m.GuildID, lim.Window, "")
		if err != nil {
			return Route{}, err
		}
		if n > lim.AgentMessagesPerMinute {
			return Route{Method: MethodRateLimit, Recipients: []Recipient{},
				Note: fmt.Sprintf("the guild's agents posted %d messages within %s, more than the %d allowed "+
					"(GUILDS_GROUP_AGENT_MESSAGES_PER_MINUTE): nobody answers this one", n, lim.Window, lim.AgentMessagesPerMinute)}, nil
		}
	}
	if len(r.Recipients) == 0 {
		return r, nil
	}
	used, err := RunsInExchange(ctx, db, m.ID)
	if err != nil {
		return Route{}, err
	}
	left := lim.RunsPerExchange - used
	if left <= 0 {
		return Route{Method: MethodRunBudget, Recipients: []Recipient{},
			Note: fmt.Sprintf("this exchange has started %d runs, the most one operator message may set off "+
				"(GUILDS_GROUP_RUNS_PER_EXCHANGE): nobody answers this one", used)}, nil
	}
	if len(r.Recipients) > left {
		var dropped []string
		for _, x := range r.Recipients[left:] {
			dropped = append(dropped, "@"+x.Name)
		}
		r.Recipients = r.Recipients[:left]
		r.Note = joinNotes(r.Note, fmt.Sprintf("the exchange may start %d more runs (GUILDS_GROUP_RUNS_PER_EXCHANGE): %v not asked",
			left, dropped))
	}
	return r, nil
}

// rootOf is the exchange a message posted in reply to parent belongs to.
func rootOf(ctx context.Context, tx pgx.Tx, parentID string) (any, error) {
	if parentID == "" {
		return nil, nil
	}
	var root string
	err := tx.QueryRow(ctx, `SELECT coalesce(root_id, id)::text FROM group_messages WHERE id = $1`, parentID).Scan(&root)
	return root, store.Map(err)
}
