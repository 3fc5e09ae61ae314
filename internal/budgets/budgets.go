// Package budgets holds the limits an operator sets on an organisation, a
// guild or an agent (tool calls per day, model tokens per day, money per
// month, in UTC days and months) and measures use against them. It owns the
// tables budget_limits and budget_use. Use is what other packages store: tool
// calls in the audit trail (internal/audit), tokens and cost in the model
// turns (internal/usage); budgets never writes those tables. For a scope with
// limits, triggers on them (migration 042) keep a daily roll-up in
// budget_use, which the check reads.
package budgets

import (
	"context"
	"errors"
	"time"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/usage"
	"github.com/guilds/guilds/internal/validation"
)

// Scopes a limit is set at.
const (
	ScopeOrganisation = "organisation"
	ScopeGuild        = "guild"
	ScopeAgent        = "agent"
)

// Limit names, as they appear in the API and in a refusal.
const (
	LimitToolCalls = "tool_calls_per_day"
	LimitTokens    = "tokens_per_day" //nolint:gosec // G101: a limit's name (model tokens), no credential
	LimitMoney     = "money_per_month"
)

// Scope is one organisation, guild or agent, with the ids above it.
type Scope struct {
	Kind           string
	ID             string
	OrganisationID string
	GuildID        string // set for a guild or an agent
}

// Limits are a scope's limits; nil is no limit, 0 allows nothing.
type Limits struct {
	ToolCallsPerDay *int64   `json:"tool_calls_per_day"`
	TokensPerDay    *int64   `json:"tokens_per_day"`
	MoneyPerMonth   *float64 `json:"money_per_month"`
	// Currency of MoneyPerMonth: only turns priced in it count.
	Currency string `json:"currency"`
}

// MaxMoney bounds a money limit (the column's precision).
const MaxMoney = 1e12

// Check validates limits, defaulting the currency to USD.
func (l *Limits) Check() error {
	if l.Currency == "" {
		l.Currency = "USD"
	}
	var probs validation.Problems
	probs.Check(l.ToolCallsPerDay == nil || (*l.ToolCallsPerDay >= 0 && *l.ToolCallsPerDay <= 1<<31-1), LimitToolCalls,
		"must be a whole number from 0 to %d, or null for no limit", 1<<31-1)
	probs.Check(l.TokensPerDay == nil || *l.TokensPerDay >= 0, LimitTokens, "must be a whole number from 0, or null for no limit")
	probs.Check(l.MoneyPerMonth == nil || (*l.MoneyPerMonth >= 0 && *l.MoneyPerMonth <= MaxMoney), LimitMoney,
		"must be an amount from 0 to %g, or null for no limit", float64(MaxMoney))
	probs.Check(usage.ValidCurrency(l.Currency), "currency", "must be a three-letter currency code such as USD or EUR")
	return probs.Err()
}

func (l Limits) empty() bool {
	return l.ToolCallsPerDay == nil && l.TokensPerDay == nil && l.MoneyPerMonth == nil
}

// Use is a scope's use in the current UTC day and month.
type Use struct {
	ToolCallsToday int64   `json:"tool_calls_today"`
	TokensToday    int64   `json:"tokens_today"`
	MoneyThisMonth float64 `json:"money_this_month"` // in the limits' currency
}

// Budget is a scope's limits, its use, and when each period resets.
type Budget struct {
	Scope       string    `json:"scope"`
	ScopeID     string    `json:"scope_id"`
	Limits      Limits    `json:"limits"`
	Use         Use       `json:"use"`
	DayResets   time.Time `json:"day_resets_at"`
	MonthResets time.Time `json:"month_resets_at"`
}

// Periods are the starts of the UTC day and month of now, and their ends.
func periods(now time.Time) (day, month, nextDay, nextMonth time.Time) {
	now = now.UTC()
	day = time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	month = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	return day, month, day.AddDate(0, 0, 1), month.AddDate(0, 1, 0)
}

// Get returns a scope's budget as of now: its limits (none set: all nil, USD)
// and its use.
func Get(ctx context.Context, db store.DB, s Scope, now time.Time) (Budget, error) {
	day, month, nextDay, nextMonth := periods(now)
	b := Budget{Scope: s.Kind, ScopeID: s.ID, Limits: Limits{Currency: "USD"}, DayResets: nextDay, MonthResets: nextMonth}
	err := db.QueryRow(ctx, `SELECT tool_calls_per_day, tokens_per_day, money_per_month::float8, currency
		FROM budget_limits WHERE scope = $1 AND scope_id = $2`, s.Kind, s.ID).
		Scan(&b.Limits.ToolCallsPerDay, &b.Limits.TokensPerDay, &b.Limits.MoneyPerMonth, &b.Limits.Currency)
	if err = store.Map(err); err != nil && !errors.Is(err, store.ErrNotFound) {
		return Budget{}, err
	}
	col := scopeColumn[s.Kind]
	err = db.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM audit_events WHERE action = 'tool_call' AND `+col+` = $1 AND at >= $2 AND `+countedCall+`),
		(SELECT coalesce(sum(prompt_tokens + completion_tokens), 0) FROM model_turns WHERE `+col+` = $1 AND at >= $2),
		(SELECT coalesce(sum(cost), 0)::float8 FROM model_turns WHERE `+col+` = $1 AND at >= $3 AND currency = $4)`,
		s.ID, day, month, b.Limits.Currency).Scan(&b.Use.ToolCallsToday, &b.Use.TokensToday, &b.Use.MoneyThisMonth)
	return b, store.Map(err)
}

// scopeColumn is the column of audit_events and model_turns that holds a
// scope's id; the names are fixed here, never taken from input.
var scopeColumn = map[string]string{ScopeOrganisation: "organisation_id", ScopeGuild: "guild_id", ScopeAgent: "agent_id"}

// countedCall: a call counts when it ran (or may have); one refused or
// denied before it ran does not, so a call refused over budget adds nothing.
const countedCall = `outcome NOT IN ('refused', 'denied')`

// Set stores a scope's limits; limits with none set delete the row (and,
// by migration 042's trigger, the scope's roll-up). Limits that stay set
// rebuild the scope's roll-up from the stored calls and turns, under its
// organisation's exclusive lock: the triggers that count a call or a turn
// hold it shared until their transaction ends, so the rebuild sees every
// call counted before and the triggers count every call after.
func Set(ctx context.Context, db store.DB, s Scope, l Limits) error {
	if err := l.Check(); err != nil {
		return err
	}
	if l.empty() {
		_, err := db.Exec(ctx, `DELETE FROM budget_limits WHERE scope = $1 AND scope_id = $2`, s.Kind, s.ID)
		return store.Map(err)
	}
	var guild, agent any
	switch s.Kind {
	case ScopeGuild:
		guild = s.ID
	case ScopeAgent:
		guild, agent = s.GuildID, s.ID
	}
	return store.InOneTx(ctx, db, func(tx store.DB) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(516, hashtext($1::uuid::text))`, s.OrganisationID); err != nil {
			return store.Map(err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO budget_limits (scope, scope_id, organisation_id, guild_id, agent_id,
				tool_calls_per_day, tokens_per_day, money_per_month, currency)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (scope, scope_id) DO UPDATE SET tool_calls_per_day = EXCLUDED.tool_calls_per_day,
				tokens_per_day = EXCLUDED.tokens_per_day, money_per_month = EXCLUDED.money_per_month,
				currency = EXCLUDED.currency, updated_at = now()`,
			s.Kind, s.ID, s.OrganisationID, guild, agent, l.ToolCallsPerDay, l.TokensPerDay, l.MoneyPerMonth, l.Currency); err != nil {
			return store.Map(err)
		}
		return rebuildUse(ctx, tx, s)
	})
}

// rebuildUse replaces a scope's roll-up with its use counted from every
// stored row (the triggers date each by its own at, in UTC). Setting limits
// is rare; the count is a range of the indexes the checks used to read.
func rebuildUse(ctx context.Context, db store.DB, s Scope) error {
	col := scopeColumn[s.Kind]
	if _, err := db.Exec(ctx, `DELETE FROM budget_use WHERE scope = $1 AND scope_id = $2`, s.Kind, s.ID); err != nil {
		return store.Map(err)
	}
	_, err := db.Exec(ctx, `INSERT INTO budget_use (scope, scope_id, day, currency, tool_calls, tokens, cost)
		SELECT $1, $2, day, currency, sum(calls), sum(toks), sum(money) FROM (
			SELECT (a.at AT TIME ZONE 'UTC')::date AS day, '' AS currency, count(*) AS calls, 0 AS toks, 0 AS money
			FROM audit_events a WHERE a.action = 'tool_call' AND a.`+col+` = $2 AND a.`+countedCall+`
			GROUP BY 1
			UNION ALL
			SELECT (t.at AT TIME ZONE 'UTC')::date, t.currency, 0, sum(t.prompt_tokens + t.completion_tokens), coalesce(sum(t.cost), 0)
			FROM model_turns t WHERE t.`+col+` = $2
			GROUP BY 1, 2) u
		GROUP BY day, currency`, s.Kind, s.ID)
	return store.Map(err)
}
