package budgets_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/budgets"
	"github.com/guilds/guilds/internal/testdb"
)

// The check reads the daily roll-up; it must say what counting the stored
// rows says, whatever came first: calls and turns stored after the limits
// were set, a run deleted (its turns go), limits removed then set again
// while calls were stored, and calls stored while the limits were being set.
func TestRollUpMatchesTheStoredRows(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	var org, guild, agent, run, other string
	if err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id),
		g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'ops' FROM o RETURNING id, organisation_id),
		a AS (INSERT INTO agents (guild_id, name, model) SELECT id, 'scout', 'openrouter/m' FROM g RETURNING id, guild_id),
		r AS (INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, budget, remaining)
			SELECT a.id, a.guild_id, g.organisation_id, 'direct', 5, 5 FROM a, g, generate_series(1, 2) RETURNING organisation_id, guild_id, agent_id, id)
		SELECT organisation_id, guild_id, agent_id, min(id::text), max(id::text) FROM r GROUP BY 1, 2, 3`).
		Scan(&org, &guild, &agent, &run, &other); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	calls := func(n int, outcome string) {
		t.Helper()
		if _, err := db.Exec(ctx, `INSERT INTO audit_events (organisation_id, guild_id, agent_id, action, tool, outcome)
			SELECT $1, $2, $3, 'tool_call', 't', $4 FROM generate_series(1, $5)`, org, guild, agent, outcome, n); err != nil {
			t.Fatal(err)
		}
	}
	seq := 0
	turn := func(runID string, tokens int, cost float64, currency string) {
		t.Helper()
		seq += 2
		if _, err := db.Exec(ctx, `INSERT INTO model_turns (run_id, seq, organisation_id, guild_id, agent_id, provider, model,
			prompt_tokens, completion_tokens, cost, currency) VALUES ($1, $2, $3, $4, $5, 'openrouter', 'm', $6, 1, $7, $8)`,
			runID, seq, org, guild, agent, tokens-1, cost, currency); err != nil {
			t.Fatal(err)
		}
	}
	scopes := []budgets.Scope{
		{Kind: budgets.ScopeOrganisation, ID: org, OrganisationID: org},
		{Kind: budgets.ScopeGuild, ID: guild, OrganisationID: org, GuildID: guild},
		{Kind: budgets.ScopeAgent, ID: agent, OrganisationID: org, GuildID: guild},
	}
	one := int64(1)
	limitAll := func() {
		t.Helper()
		for _, sc := range scopes {
			if err := budgets.Set(ctx, db, sc, budgets.Limits{ToolCallsPerDay: &one, TokensPerDay: &one}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// check: counting the stored rows (Get), each scope's roll-up and the
	// check (whose limits of one are reached, so it reports the use) agree.
	check := func(step string, want budgets.Use) {
		t.Helper()
		for _, sc := range scopes {
			if b, err := budgets.Get(ctx, db, sc, now); err != nil || b.Use != want {
				t.Fatalf("%s: %s counts %+v (%v), want %+v", step, sc.Kind, b.Use, err, want)
			}
			var got budgets.Use
			if err := db.QueryRow(ctx, `SELECT coalesce(sum(tool_calls) FILTER (WHERE day = $2), 0),
				coalesce(sum(tokens) FILTER (WHERE day = $2), 0), coalesce(sum(cost) FILTER (WHERE currency = 'USD'), 0)::float8
				FROM budget_use WHERE scope = $3 AND scope_id = $1`, sc.ID, now.UTC().Format(time.DateOnly), sc.Kind).
				Scan(&got.ToolCallsToday, &got.TokensToday, &got.MoneyThisMonth); err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("%s: the %s's roll-up holds %+v, want %+v", step, sc.Kind, got, want)
			}
		}
		subject := budgets.Subject{OrganisationID: org, GuildID: guild, AgentID: agent}
		if r, err := budgets.Check(ctx, db, subject, budgets.ForToolCall, now); err != nil || r == nil || r.Used != float64(want.ToolCallsToday) {
			t.Fatalf("%s: the check's calls %+v (%v), want %d", step, r, err, want.ToolCallsToday)
		}
		if r, err := budgets.Check(ctx, db, subject, budgets.ForModelTurn, now); err != nil || r == nil || r.Used != float64(want.TokensToday) {
			t.Fatalf("%s: the check's tokens %+v (%v), want %d", step, r, err, want.TokensToday)
		}
	}

	calls(3, "ok")
	turn(run, 100, 0.5, "USD")
	limitAll()
	check("rebuilt from the stored rows", budgets.Use{ToolCallsToday: 3, TokensToday: 100, MoneyThisMonth: 0.5})

	calls(2, "ok")
	calls(1, "timed_out")
	calls(4, "refused")
	calls(1, "denied")
	turn(other, 40, 0.25, "USD")
	turn(run, 10, 1, "EUR")
	check("counted by the triggers", budgets.Use{ToolCallsToday: 6, TokensToday: 150, MoneyThisMonth: 0.75})

	if _, err := db.Exec(ctx, `DELETE FROM runs WHERE id = $1`, other); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `DELETE FROM audit_events WHERE id = (SELECT min(id) FROM audit_events WHERE outcome = 'ok')`); err != nil {
		t.Fatal(err)
	}
	check("a run deleted, a call pruned", budgets.Use{ToolCallsToday: 5, TokensToday: 110, MoneyThisMonth: 0.5})

	for _, sc := range scopes {
		if err := budgets.Set(ctx, db, sc, budgets.Limits{}); err != nil {
			t.Fatal(err)
		}
	}
	calls(2, "error")
	var left int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM budget_use`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d roll-up rows of scopes without limits (%v)", left, err)
	}

	// Calls stored while the limits are set, from ten connections at once.
	var wg sync.WaitGroup
	for range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := db.Exec(ctx, `INSERT INTO audit_events (organisation_id, guild_id, agent_id, action, tool, outcome)
					VALUES ($1, $2, $3, 'tool_call', 't', 'ok')`, org, guild, agent); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for range 5 {
		limitAll()
	}
	wg.Wait()
	check("calls stored while the limits were set", budgets.Use{ToolCallsToday: 207, TokensToday: 110, MoneyThisMonth: 0.5})
}
