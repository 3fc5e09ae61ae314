package budgets

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/guilds/guilds/internal/store"
)

// Subject is what a run spends against: its organisation, guild and agent.
type Subject struct {
	OrganisationID string
	GuildID        string
	AgentID        string
}

// Spend says which limits a check weighs.
type Spend int

// What a check is for.
const (
	// ForToolCall weighs the tool-call limits: a call is about to run.
	ForToolCall Spend = 1 << iota
	// ForModelTurn weighs the token and money limits: a turn is about to be asked for.
	ForModelTurn
	// ForStart weighs every limit: a new run is about to be stored.
	ForStart = ForToolCall | ForModelTurn
)

// Reach is a limit that is reached: the scope, the limit, its figure, the
// use against it and when its period resets.
type Reach struct {
	Scope    string    `json:"scope"`
	ScopeID  string    `json:"scope_id"`
	Limit    string    `json:"limit"`
	Allowed  float64   `json:"allowed"`
	Used     float64   `json:"used"`
	Currency string    `json:"currency,omitempty"`
	ResetsAt time.Time `json:"resets_at"`
}

// Message says in one sentence which limit is reached and when it resets.
func (r Reach) Message() string {
	owner := "the " + r.Scope + "'s"
	when := r.ResetsAt.UTC().Format("2006-01-02 15:04 UTC")
	switch r.Limit {
	case LimitToolCalls:
		return fmt.Sprintf("%s budget of %s tool calls per day is reached (%s used today; it resets at %s)",
			owner, whole(r.Allowed), whole(r.Used), when)
	case LimitTokens:
		return fmt.Sprintf("%s budget of %s model tokens per day is reached (%s used today; it resets at %s)",
			owner, whole(r.Allowed), whole(r.Used), when)
	}
	return fmt.Sprintf("%s budget of %.2f %s of model spend per month is reached (%.2f %s spent this month; it resets at %s)",
		owner, r.Allowed, r.Currency, r.Used, r.Currency, when)
}

func whole(v float64) string { return strconv.FormatInt(int64(v), 10) }

// ReachedError refuses what a reached limit forbids; the API answers it with
// 429 budget_reached.
type ReachedError struct{ Reach Reach }

func (e *ReachedError) Error() string { return "budget reached: " + e.Reach.Message() }

// checkSQL reads, in one statement, the limits set on the subject's three
// scopes and their use from the daily roll-up (migration 042): today's row
// of each for calls and tokens, the month's for money. With no limit set it
// is one primary-key probe that returns no row; with limits it reads at
// most a row per day and currency of the month, whatever the calls made.
const checkSQL = `SELECT l.scope, l.scope_id, l.tool_calls_per_day, l.tokens_per_day, l.money_per_month::float8, l.currency,
	coalesce(sum(u.tool_calls) FILTER (WHERE u.day >= $4), 0)::bigint,
	coalesce(sum(u.tokens) FILTER (WHERE u.day >= $4), 0)::bigint,
	coalesce(sum(u.cost) FILTER (WHERE u.currency = l.currency), 0)::float8
	FROM budget_limits l
	LEFT JOIN budget_use u ON u.scope = l.scope AND u.scope_id = l.scope_id AND u.day >= $5
	WHERE (l.scope = 'organisation' AND l.scope_id = $1) OR (l.scope = 'guild' AND l.scope_id = $2)
		OR (l.scope = 'agent' AND l.scope_id = $3)
	GROUP BY l.scope, l.scope_id
	ORDER BY CASE l.scope WHEN 'organisation' THEN 0 WHEN 'guild' THEN 1 ELSE 2 END`

// Check returns the first limit of the subject's scopes (organisation, then
// guild, then agent) that what weighs and that is reached, or nil. A limit
// is reached when the use has come to it: with 2 calls a day, the third is
// refused. Calls running at once are each checked against what was stored
// before them, so they may pass a limit by as many as run together.
func Check(ctx context.Context, db store.DB, s Subject, what Spend, now time.Time) (*Reach, error) {
	day, month, nextDay, nextMonth := periods(now)
	rows, err := db.Query(ctx, checkSQL, nullID(s.OrganisationID), nullID(s.GuildID), nullID(s.AgentID),
		pgtype.Date{Time: day, Valid: true}, pgtype.Date{Time: month, Valid: true})
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	var found *Reach
	for rows.Next() {
		var (
			scope, id, currency string
			l                   Limits
			calls, tokens       int64
			money               float64
		)
		if err := rows.Scan(&scope, &id, &l.ToolCallsPerDay, &l.TokensPerDay, &l.MoneyPerMonth, &currency,
			&calls, &tokens, &money); err != nil {
			return nil, store.Map(err)
		}
		if found != nil {
			continue
		}
		switch {
		case what&ForToolCall != 0 && l.ToolCallsPerDay != nil && calls >= *l.ToolCallsPerDay:
			found = &Reach{Scope: scope, ScopeID: id, Limit: LimitToolCalls, Allowed: float64(*l.ToolCallsPerDay), Used: float64(calls), ResetsAt: nextDay}
		case what&ForModelTurn != 0 && l.TokensPerDay != nil && tokens >= *l.TokensPerDay:
			found = &Reach{Scope: scope, ScopeID: id, Limit: LimitTokens, Allowed: float64(*l.TokensPerDay), Used: float64(tokens), ResetsAt: nextDay}
		case what&ForModelTurn != 0 && l.MoneyPerMonth != nil && money >= *l.MoneyPerMonth:
			found = &Reach{Scope: scope, ScopeID: id, Limit: LimitMoney, Allowed: *l.MoneyPerMonth, Used: money, Currency: currency, ResetsAt: nextMonth}
		}
	}
	return found, store.Map(rows.Err())
}

// Refuse returns a *ReachedError when a limit of what is reached.
func Refuse(ctx context.Context, db store.DB, s Subject, what Spend, now time.Time) error {
	r, err := Check(ctx, db, s, what, now)
	if err != nil || r == nil {
		return err
	}
	return &ReachedError{Reach: *r}
}

func nullID(id string) any {
	if id == "" {
		return nil
	}
	return id
}
