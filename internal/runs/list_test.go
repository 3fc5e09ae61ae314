package runs_test

import (
	"context"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
)

// TestListPagesByKeyset: a page's last cursor lists the next page with no run
// repeated or skipped, even when runs share a created_at; filters narrow it.
func TestListPagesByKeyset(t *testing.T) {
	db := testdb.New(t)
	ctx := context.Background()
	first := newRun(t, db)
	ids := map[string]bool{first.ID: true}
	for i := 0; i < 6; i++ {
		r, err := runs.Create(ctx, db, runs.NewRun{AgentID: first.AgentID, GuildID: first.GuildID, OrganisationID: first.OrganisationID,
			Trigger: "schedule", Budget: 5, Message: "nightly report"})
		if err != nil {
			t.Fatal(err)
		}
		ids[r.ID] = true
	}
	// Three runs at one instant: the id breaks the tie.
	if _, err := db.Exec(ctx, `UPDATE runs SET created_at = '2026-01-01T00:00:00Z' WHERE id IN
		(SELECT id FROM runs WHERE agent_id = $1 ORDER BY id LIMIT 3)`, first.AgentID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runs.SaveToolCall(ctx, db, runs.ToolCall{RunID: first.ID, Seq: 3, CallID: "c1", Tool: "notes_read", Result: "boom",
		Outcome: runs.OutcomeError, StartedAt: time.Now(), FinishedAt: time.Now()}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	f := runs.Filter{GuildID: first.GuildID, Limit: 2}
	for page := 0; page < 10; page++ {
		if err := f.Check(); err != nil {
			t.Fatal(err)
		}
		got, err := runs.List(ctx, db, f)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range got {
			if seen[s.ID] {
				t.Fatalf("run %s listed twice", s.ID)
			}
			seen[s.ID] = true
			if s.ID == first.ID && (s.Calls != 1 || s.Errors != 1 || s.FirstMessage != "hi") {
				t.Errorf("summary of the first run = %+v", s)
			}
		}
		if len(got) < f.Limit {
			break
		}
		f.Before = got[len(got)-1].Cursor
	}
	if len(seen) != len(ids) {
		t.Fatalf("listed %d runs, want %d", len(seen), len(ids))
	}
	f = runs.Filter{OrganisationID: first.OrganisationID, Trigger: "direct", Status: "queued"}
	if err := f.Check(); err != nil {
		t.Fatal(err)
	}
	if got, err := runs.List(ctx, db, f); err != nil || len(got) != 1 || got[0].ID != first.ID {
		t.Fatalf("direct queued runs = %+v, %v", got, err)
	}
	for _, c := range []struct {
		f    runs.Filter
		want int
	}{
		{runs.Filter{GuildID: first.GuildID, AgentID: first.AgentID}, 7},
		{runs.Filter{OrganisationID: first.OrganisationID, Trigger: "schedule"}, 6},
		{runs.Filter{AgentID: first.AgentID, Until: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}, 3},
		{runs.Filter{AgentID: first.AgentID, Since: time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)}, 4},
	} {
		if err := c.f.Check(); err != nil {
			t.Fatal(err)
		}
		if got, err := runs.List(ctx, db, c.f); err != nil || len(got) != c.want {
			t.Errorf("filter %+v listed %d runs (%v), want %d", c.f, len(got), err, c.want)
		}
	}
	for _, bad := range []runs.Filter{{Status: "sleeping"}, {Trigger: "cron"}, {Before: "not-a-cursor"}, {Limit: 1000},
		{Since: time.Now(), Until: time.Now().Add(-time.Hour)}} {
		if err := bad.Check(); err == nil {
			t.Errorf("filter %+v was accepted", bad)
		}
	}
}
