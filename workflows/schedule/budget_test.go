package schedule_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/budgets"
)

// A schedule that fires while its agent's budget is reached starts no run:
// the firing is stored skipped, with the limit as its reason.
func TestFiringOverBudgetSkips(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	ctx := context.Background()
	var org, guild string
	if err := e.db.QueryRow(ctx, `SELECT organisation_id, guild_id FROM agents a JOIN guilds g ON g.id = a.guild_id WHERE a.id = $1`,
		e.agent).Scan(&org, &guild); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if err := budgets.Set(ctx, e.db, budgets.Scope{Kind: budgets.ScopeAgent, ID: e.agent, OrganisationID: org, GuildID: guild},
		budgets.Limits{TokensPerDay: &zero}); err != nil {
		t.Fatal(err)
	}
	s := e.create(cronInput("0 3 1 1 *"))
	if err := e.mgr.Trigger(ctx, s); err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Minute, "the firing to be recorded", func() bool {
		return e.count(`SELECT count(*) FROM schedule_firings WHERE schedule_id = $1`, s.ID) == 1
	})
	var skipped string
	var run *string
	if err := e.db.QueryRow(ctx, `SELECT skipped, run_id FROM schedule_firings WHERE schedule_id = $1`, s.ID).Scan(&skipped, &run); err != nil {
		t.Fatal(err)
	}
	if run != nil || !strings.Contains(skipped, "the agent's budget of 0 model tokens per day is reached") {
		t.Fatalf("firing: run %v, skipped %q", run, skipped)
	}
	if n := e.count(`SELECT count(*) FROM runs`); n != 0 {
		t.Fatalf("%d runs", n)
	}
	if o, _ := e.model.requests(); len(o) != 0 {
		t.Fatalf("the model was asked %d times", len(o))
	}
}
