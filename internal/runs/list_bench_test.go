package runs_test

import (
	"context"
	"testing"

	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
)

// BenchmarkListPage: one page of 50 of an organisation's 5,000 runs, each with
// its opening message and call counts, read from the middle by its keyset
// cursor (what Older runs and a live list's refresh do).
func BenchmarkListPage(b *testing.B) {
	db := testdb.New(b)
	ctx := context.Background()
	first := newRun(b, db)
	if _, err := db.Exec(ctx, `WITH r AS (
			INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, budget, remaining, created_at)
			SELECT $1, $2, $3, 'direct', 5, 5, now() - make_interval(secs => g) FROM generate_series(1, 4999) g RETURNING id)
		INSERT INTO messages (run_id, seq, role, content) SELECT id, 1, 'user', 'a question about the ledger' FROM r`,
		first.AgentID, first.GuildID, first.OrganisationID); err != nil {
		b.Fatal(err)
	}
	if _, err := db.Exec(ctx, `ANALYZE runs`); err != nil {
		b.Fatal(err)
	}
	f := runs.Filter{OrganisationID: first.OrganisationID, Limit: 2500}
	if err := f.Check(); err == nil {
		b.Fatal("a page over the bound was accepted")
	}
	f.Limit = runs.MaxPage
	_ = f.Check()
	deep, err := runs.List(ctx, db, f)
	if err != nil || len(deep) != runs.MaxPage {
		b.Fatalf("%d runs, %v", len(deep), err)
	}
	f = runs.Filter{OrganisationID: first.OrganisationID, Before: deep[len(deep)-1].Cursor}
	if err := f.Check(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		page, err := runs.List(ctx, db, f)
		if err != nil || len(page) != runs.DefaultPage {
			b.Fatalf("%d runs, %v", len(page), err)
		}
	}
}
