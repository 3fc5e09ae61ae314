package usage_test

import (
	"context"
	"math"
	"testing"

	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/usage"
)

// A turn's cost is its reported tokens times the price per million in force
// when it is stored; a model without a price stores no cost; a retried turn
// keeps its first row.
func TestTurnCostIsPriceTimesUsage(t *testing.T) {
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
	if _, err := usage.SetPrice(ctx, db, usage.Price{Provider: "openrouter", Model: "m", InputPerMillion: 2.5, OutputPerMillion: 10, Currency: "EUR"}); err != nil {
		t.Fatal(err)
	}
	turn := usage.Turn{RunID: run, OrganisationID: org, GuildID: guild, AgentID: agent, Provider: "openrouter", Model: "m"}
	for i, tok := range [][2]int{{1000, 200}, {4000, 0}} {
		turn.Seq, turn.PromptTokens, turn.CompletionTokens = 2*i+2, tok[0], tok[1]
		if err := usage.RecordTurn(ctx, db, turn); err != nil {
			t.Fatal(err)
		}
	}
	// The retry of the first turn, after a price change, changes nothing.
	if _, err := usage.SetPrice(ctx, db, usage.Price{Provider: "openrouter", Model: "m", InputPerMillion: 100, OutputPerMillion: 100, Currency: "EUR"}); err != nil {
		t.Fatal(err)
	}
	turn.Seq, turn.PromptTokens, turn.CompletionTokens = 2, 9999, 9999
	if err := usage.RecordTurn(ctx, db, turn); err != nil {
		t.Fatal(err)
	}
	turn.Seq, turn.Model, turn.PromptTokens, turn.CompletionTokens = 6, "unpriced", 7, 7
	if err := usage.RecordTurn(ctx, db, turn); err != nil {
		t.Fatal(err)
	}
	u, err := usage.OfRun(ctx, db, run)
	if err != nil {
		t.Fatal(err)
	}
	// (1000 × 2.5 + 200 × 10 + 4000 × 2.5) / 1e6 = 0.0145 EUR
	if len(u.Turns) != 3 || u.PromptTokens != 5007 || u.CompletionTokens != 207 || u.Unpriced != 1 || len(u.Costs) != 1 ||
		u.Costs[0].Currency != "EUR" || math.Abs(u.Costs[0].Amount-0.0145) > 1e-12 || u.Turns[2].Cost != nil {
		t.Fatalf("usage %+v", u)
	}
}
