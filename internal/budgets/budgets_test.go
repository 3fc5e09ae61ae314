package budgets_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/budgets"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/validation"
)

// Limits are checked against what was used since the start of the UTC day
// (calls, tokens) or month (money): refused and denied calls and turns in
// another currency do not count, the organisation's limit is named before
// the guild's and the agent's, and each says when it resets.
func TestCheckCountsTheStoredRows(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	var org, guild, agent, run string
	if err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id),
		g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'ops' FROM o RETURNING id, organisation_id),
		a AS (INSERT INTO agents (guild_id, name, model) SELECT id, 'scout', 'openrouter/m' FROM g RETURNING id, guild_id)
		INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, budget, remaining)
		SELECT a.id, a.guild_id, g.organisation_id, 'direct', 5, 5 FROM a, g RETURNING organisation_id, guild_id, agent_id, id`).
		Scan(&org, &guild, &agent, &run); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 5, 13, 0, 0, 0, time.UTC)
	// Two calls today, one refused and one denied today, one yesterday.
	if _, err := db.Exec(ctx, `INSERT INTO audit_events (at, organisation_id, guild_id, agent_id, action, tool, outcome)
		VALUES ($4, $1, $2, $3, 'tool_call', 't', 'ok'), ($4, $1, $2, $3, 'tool_call', 't', 'error'),
			($4, $1, $2, $3, 'tool_call', 't', 'refused'), ($4, $1, $2, $3, 'tool_call', 't', 'denied'),
			($4 - interval '1 day', $1, $2, $3, 'tool_call', 't', 'ok')`, org, guild, agent, now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Turns: 300 tokens today for 1.50 USD, 1 EUR this month, 1,000 tokens on the 1st.
	if _, err := db.Exec(ctx, `INSERT INTO model_turns (run_id, seq, organisation_id, guild_id, agent_id, provider, model,
			prompt_tokens, completion_tokens, cost, currency, at)
		VALUES ($1, 2, $2, $3, $4, 'openrouter', 'm', 200, 100, 1.5, 'USD', $5),
			($1, 4, $2, $3, $4, 'openrouter', 'm', 0, 0, 1, 'EUR', $5),
			($1, 6, $2, $3, $4, 'openrouter', 'm', 500, 500, 0.25, 'USD', $6)`,
		run, org, guild, agent, now.Add(-time.Hour), time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	s := budgets.Subject{OrganisationID: org, GuildID: guild, AgentID: agent}
	if r, err := budgets.Check(ctx, db, s, budgets.ForStart, now); err != nil || r != nil {
		t.Fatalf("no limit: %+v %v", r, err)
	}
	i := func(v int64) *int64 { return &v }
	f := func(v float64) *float64 { return &v }
	orgScope := budgets.Scope{Kind: budgets.ScopeOrganisation, ID: org, OrganisationID: org}
	agentScope := budgets.Scope{Kind: budgets.ScopeAgent, ID: agent, OrganisationID: org, GuildID: guild}
	set := func(sc budgets.Scope, l budgets.Limits) {
		t.Helper()
		if err := budgets.Set(ctx, db, sc, l); err != nil {
			t.Fatal(err)
		}
	}
	set(agentScope, budgets.Limits{ToolCallsPerDay: i(2)})
	set(orgScope, budgets.Limits{ToolCallsPerDay: i(3), TokensPerDay: i(301), MoneyPerMonth: f(1.75), Currency: "USD"})
	r, err := budgets.Check(ctx, db, s, budgets.ForToolCall, now)
	if err != nil || r == nil || r.Scope != budgets.ScopeAgent || r.Used != 2 || r.Allowed != 2 ||
		!r.ResetsAt.Equal(time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("agent calls: %+v %v", r, err)
	}
	if r, err := budgets.Check(ctx, db, s, budgets.ForModelTurn, now); err != nil || r == nil || r.Limit != budgets.LimitMoney ||
		r.Used != 1.75 || r.Currency != "USD" || !r.ResetsAt.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("org money: %+v %v", r, err)
	}
	set(orgScope, budgets.Limits{ToolCallsPerDay: i(2), TokensPerDay: i(300)})
	r, err = budgets.Check(ctx, db, s, budgets.ForStart, now)
	if err != nil || r == nil || r.Scope != budgets.ScopeOrganisation || r.Limit != budgets.LimitToolCalls {
		t.Fatalf("the organisation first: %+v %v", r, err)
	}
	if msg := r.Message(); msg != "the organisation's budget of 2 tool calls per day is reached (2 used today; it resets at 2026-12-06 00:00 UTC)" {
		t.Fatalf("message %q", msg)
	}
	if r, _ := budgets.Check(ctx, db, s, budgets.ForModelTurn, now); r == nil || r.Limit != budgets.LimitTokens || r.Used != 300 {
		t.Fatalf("org tokens: %+v", r)
	}
	b, err := budgets.Get(ctx, db, orgScope, now)
	if err != nil || b.Use != (budgets.Use{ToolCallsToday: 2, TokensToday: 300, MoneyThisMonth: 1.75}) {
		t.Fatalf("use %+v %v", b, err)
	}
	var ve *validation.Error
	err = budgets.Set(ctx, db, orgScope, budgets.Limits{TokensPerDay: i(-1), Currency: "usd"})
	if !errors.As(err, &ve) || len(ve.Problems) != 2 || !strings.Contains(err.Error(), "tokens_per_day") {
		t.Fatalf("bad limits: %v", err)
	}
}
