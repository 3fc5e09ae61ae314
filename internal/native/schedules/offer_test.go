package schedules_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/internal/native/schedules"
	"github.com/guilds/guilds/internal/testdb"
)

// On the registry boot builds and the seeded catalog, the six tools are
// offered on direct and group-chat runs, and a schedule-triggered run
// offers none of them (it cannot schedule more of itself) while keeping
// memory_write.
func TestScheduleToolsFollowTheTrigger(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	if err := grants.Seed(ctx, db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	svc := grants.NewService(native.Registry(db, log), nil, log)
	var agent string
	if err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('A', 'a') RETURNING id),
		g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'g' FROM o RETURNING id)
		INSERT INTO agents (guild_id, name) SELECT id, 'alice' FROM g RETURNING id`).Scan(&agent); err != nil {
		t.Fatal(err)
	}
	for trig, want := range map[grants.Trigger]bool{grants.TriggerDirect: true, grants.TriggerGroup: true, grants.TriggerSchedule: false} {
		o, err := svc.Offered(ctx, db, agent, trig)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, tl := range o.Tools {
			got[tl.Name] = true
		}
		for _, n := range schedules.Names {
			if got[n] != want {
				t.Errorf("%s run: %s offered=%v, want %v", trig, n, got[n], want)
			}
		}
		if !got["memory_write"] || !o.Memory {
			t.Errorf("%s run: memory not on (%v)", trig, o.Memory)
		}
	}
}
