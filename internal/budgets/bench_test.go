package budgets_test

import (
	"context"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/budgets"
	"github.com/guilds/guilds/internal/testdb"
)

// BenchmarkCheck is budgets.Check for a tool call alone: no limit on the
// run's scopes, then a tool-call limit (never reached) on its organisation,
// guild and agent, each of which made 5,000 calls today, on a box whose 20
// other organisations made as many.
func BenchmarkCheck(b *testing.B) {
	db := testdb.New(b)
	ctx := context.Background()
	var org, guild, agent string
	if err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id),
		g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'ops' FROM o RETURNING id, organisation_id)
		INSERT INTO agents (guild_id, name, model, prompt) SELECT id, 'scout', 'openrouter/m', 'Test.' FROM g
		RETURNING (SELECT organisation_id FROM g), guild_id, id`).Scan(&org, &guild, &agent); err != nil {
		b.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO audit_events (organisation_id, guild_id, agent_id, action, tool, outcome)
			SELECT $1::uuid, $2::uuid, $3::uuid, 'tool_call', 'noop', 'ok' FROM generate_series(1, 5000)`,
		`WITH o AS (INSERT INTO organisations (name, slug) SELECT 'o' || i, 'o' || i FROM generate_series(1, 20) i RETURNING id)
			INSERT INTO audit_events (organisation_id, guild_id, agent_id, action, tool, outcome)
			SELECT o.id, gen_random_uuid(), gen_random_uuid(), 'tool_call', 'noop', 'ok' FROM o, generate_series(1, 5000)
			WHERE $1::uuid IS NOT NULL AND $2::uuid IS NOT NULL AND $3::uuid IS NOT NULL`,
	} {
		if _, err := db.Exec(ctx, q, org, guild, agent); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := db.Exec(ctx, `VACUUM ANALYZE audit_events`); err != nil {
		b.Fatal(err)
	}
	subject := budgets.Subject{OrganisationID: org, GuildID: guild, AgentID: agent}
	scopes := []budgets.Scope{
		{Kind: budgets.ScopeOrganisation, ID: org, OrganisationID: org},
		{Kind: budgets.ScopeGuild, ID: guild, OrganisationID: org, GuildID: guild},
		{Kind: budgets.ScopeAgent, ID: agent, OrganisationID: org, GuildID: guild},
	}
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
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := budgets.Check(ctx, db, subject, budgets.ForToolCall, time.Now())
				if err != nil || r != nil {
					b.Fatalf("check: %+v %v", r, err)
				}
			}
		})
	}
}
