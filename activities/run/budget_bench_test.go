package run_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"testing"
	"time"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/budgets"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

// budgetPriorCalls is how many tool calls the organisation has already made
// today when the benchmark starts, so a set limit counts a real day's rows.
const budgetPriorCalls = 5000

// BenchmarkToolCallBudget is the tool activity (runact.Activities.Tool,
// called directly) for a quick native call (noop), with no budget set on
// the run's scopes and with a tool-call limit set on its organisation, guild
// and agent that is never reached, after budgetPriorCalls calls already made
// today (and 20 other organisations as many each). The difference is the
// budget check on the hot path: one query that,
// with no limit set, finds no row, and with limits counts today's calls of
// each scope from the audit trail's partial indexes. It reports p50 and p95
// per call besides the mean.
func BenchmarkToolCallBudget(b *testing.B) {
	db := testdb.New(b)
	ctx := context.Background()
	var org, guild, agent string
	if err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id),
		g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'ops' FROM o RETURNING id, organisation_id)
		INSERT INTO agents (guild_id, name, model, prompt) SELECT id, 'scout', 'openrouter/m', 'Test.' FROM g
		RETURNING (SELECT organisation_id FROM g), guild_id, id`).Scan(&org, &guild, &agent); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO audit_events (organisation_id, guild_id, agent_id, action, tool, outcome)
		SELECT $1, $2, $3, 'tool_call', 'noop', 'ok' FROM generate_series(1, $4)`, org, guild, agent, budgetPriorCalls); err != nil {
		b.Fatal(err)
	}
	// A box's other organisations, whose rows the indexes skip.
	if _, err := db.Exec(ctx, `WITH o AS (INSERT INTO organisations (name, slug) SELECT 'o' || i, 'o' || i FROM generate_series(1, 20) i RETURNING id)
		INSERT INTO audit_events (organisation_id, guild_id, agent_id, action, tool, outcome)
		SELECT o.id, gen_random_uuid(), gen_random_uuid(), 'tool_call', 'noop', 'ok' FROM o, generate_series(1, $1)`, budgetPriorCalls); err != nil {
		b.Fatal(err)
	}
	// As autovacuum would have: the day's earlier rows are all-visible.
	if _, err := db.Exec(ctx, `VACUUM ANALYZE audit_events`); err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	reg := tools.NewRegistry(tools.WithLogger(quiet))
	reg.Register(tools.Tool{Name: "noop", Quick: true, Idempotent: true, Description: "Does nothing",
		Schema:  json.RawMessage(`{"type":"object","properties":{}}`),
		Handler: func(context.Context, tools.Call) (string, error) { return "ok", nil }})
	acts := runact.New(runact.Deps{DB: db, Tools: reg, Log: quiet, Heartbeat: time.Second})
	r, err := runs.Create(ctx, db, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "direct",
		Model: "openrouter/m", Budget: 1 << 20, Message: "go"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := acts.Snapshot(ctx, runact.SnapshotInput{RunID: r.ID}); err != nil {
		b.Fatal(err)
	}
	scopes := []budgets.Scope{
		{Kind: budgets.ScopeOrganisation, ID: org, OrganisationID: org},
		{Kind: budgets.ScopeGuild, ID: guild, OrganisationID: org, GuildID: guild},
		{Kind: budgets.ScopeAgent, ID: agent, OrganisationID: org, GuildID: guild},
	}
	seq := 1
	for _, limits := range []string{"none", "set"} {
		b.Run("limits="+limits, func(b *testing.B) {
			var l budgets.Limits
			if limits == "set" {
				n := int64(1 << 30)
				l.ToolCallsPerDay = &n
			}
			for _, s := range scopes {
				if err := budgets.Set(ctx, db, s, l); err != nil {
					b.Fatal(err)
				}
			}
			took := make([]time.Duration, 0, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				seq++
				start := time.Now()
				out, err := acts.Tool(ctx, runact.ToolInput{RunID: r.ID, Seq: seq, CallID: "c", Name: "noop", Arguments: `{}`, Remaining: 1 << 20})
				took = append(took, time.Since(start))
				if err != nil || out.Outcome != runs.OutcomeOK {
					b.Fatalf("call: %+v %v", out, err)
				}
			}
			b.StopTimer()
			sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
			b.ReportMetric(float64(took[len(took)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(took[len(took)*95/100].Microseconds()), "p95-µs")
		})
	}
}
