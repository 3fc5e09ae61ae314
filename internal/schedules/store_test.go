package schedules_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/schedules"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
)

func newAgent(t *testing.T) (store.DB, string) {
	t.Helper()
	db := testdb.New(t)
	var agent string
	err := db.QueryRow(context.Background(), `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('A', 'a') RETURNING id),
		g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'g' FROM o RETURNING id)
		INSERT INTO agents (guild_id, name) SELECT id, 'alice' FROM g RETURNING id`).Scan(&agent)
	if err != nil {
		t.Fatal(err)
	}
	return db, agent
}

func TestInsertListLimit(t *testing.T) {
	t.Parallel()
	db, agent := newAgent(t)
	ctx := context.Background()
	c, err := schedules.Check(schedules.New{AgentID: agent, Kind: schedules.KindCron, Cron: " 0  9 * * 1-5 ",
		Description: "weekday digest", Instruction: "Write the digest."})
	if err != nil {
		t.Fatal(err)
	}
	next, _ := c.Cron.Next(time.Now())
	s, err := schedules.Insert(ctx, db, c, 2, &next)
	if err != nil {
		t.Fatal(err)
	}
	if s.Cron != "0 9 * * 1-5" || s.State != schedules.StateActive || s.NextRunAt == nil || s.GuildID == "" {
		t.Fatalf("stored %+v", s)
	}
	w, err := schedules.Check(schedules.New{AgentID: agent, Kind: schedules.KindWindow, Timezone: "Europe/Paris",
		Start: "22:00", End: "02:00+1", MaxWakes: 2, Description: "night watch", Instruction: "Look around."})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := schedules.Insert(ctx, db, w, 2, nil); err != nil {
		t.Fatal(err)
	}
	_, err = schedules.Insert(ctx, db, w, 2, nil)
	var limit *schedules.LimitError
	if !errors.As(err, &limit) || limit.Max != 2 {
		t.Fatalf("third schedule: %v", err)
	}
	list, err := schedules.ListByAgent(ctx, db, agent)
	if err != nil || len(list) != 2 || list[1].End != "02:00+1" || list[1].Start != "22:00" {
		t.Fatalf("list %+v %v", list, err)
	}
	if _, err := list[1].WindowSpec(); err != nil {
		t.Fatalf("stored window does not parse back: %v", err)
	}
	p, err := schedules.SetPaused(ctx, db, s.ID, true, nil)
	if err != nil || p.State != schedules.StatePaused || p.NextRunAt != nil {
		t.Fatalf("paused %+v %v", p, err)
	}
	if err := schedules.Delete(ctx, db, s.ID); err != nil {
		t.Fatal(err)
	}
	if err := schedules.Delete(ctx, db, s.ID); !errors.Is(err, schedules.ErrNotFound) {
		t.Fatalf("second delete: %v", err)
	}
	if _, err := db.Exec(ctx, `DELETE FROM agents WHERE id = $1`, agent); err != nil {
		t.Fatal(err)
	}
	if all, _ := schedules.All(ctx, db); len(all) != 0 {
		t.Fatalf("agent deleted, schedules left: %d", len(all))
	}
}

func TestFiringIsKeyed(t *testing.T) {
	t.Parallel()
	db, agent := newAgent(t)
	ctx := context.Background()
	c, _ := schedules.Check(schedules.New{AgentID: agent, Kind: schedules.KindCron, Cron: "*/5 * * * *",
		Description: "d", Instruction: "i"})
	s, err := schedules.Insert(ctx, db, c, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := schedules.Firing{Key: "k1", ScheduleID: s.ID, DueAt: time.Now(), Skipped: "paused"}
	if err := schedules.RecordFiring(ctx, db, f); err != nil {
		t.Fatal(err)
	}
	if err := schedules.RecordFiring(ctx, db, f); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second firing under one key: %v", err)
	}
	got, err := schedules.FindFiring(ctx, db, "k1")
	if err != nil || got.Skipped != "paused" {
		t.Fatalf("found %+v %v", got, err)
	}
	if live, err := schedules.LastRunLive(ctx, db, s.ID); err != nil || live {
		t.Fatalf("no run yet: live=%v %v", live, err)
	}
}
