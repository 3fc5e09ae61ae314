package migrate_test

import (
	"context"
	"testing"

	"github.com/guilds/guilds/internal/migrate"
	"github.com/guilds/guilds/internal/testdb"
)

func TestUpDownUp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t) // already migrated up from the template
	all, err := migrate.Load()
	if err != nil {
		t.Fatal(err)
	}
	reverted, err := migrate.Down(ctx, pool, 0)
	if err != nil {
		t.Fatalf("down: %v", err)
	}
	if len(reverted) != len(all) {
		t.Fatalf("down reverted %d of %d migrations", len(reverted), len(all))
	}
	var tables int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables
		WHERE table_schema='public' AND table_name <> 'schema_migrations'`).Scan(&tables); err != nil {
		t.Fatal(err)
	}
	if tables != 0 {
		t.Fatalf("after down, %d tables remain", tables)
	}
	applied, err := migrate.Up(ctx, pool)
	if err != nil {
		t.Fatalf("up again: %v", err)
	}
	if len(applied) != len(all) {
		t.Fatalf("up applied %d of %d", len(applied), len(all))
	}
	again, err := migrate.Up(ctx, pool)
	if err != nil || len(again) != 0 {
		t.Fatalf("second up should be a no-op, applied %v err %v", again, err)
	}
	st, err := migrate.List(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st {
		if s.AppliedAt == nil {
			t.Fatalf("migration %d not applied", s.Version)
		}
	}
}

func TestDownOneStep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := testdb.New(t)
	all, _ := migrate.Load()
	reverted, err := migrate.Down(ctx, pool, 1)
	if err != nil || len(reverted) != 1 || reverted[0] != all[len(all)-1].Version {
		t.Fatalf("down 1: %v %v", reverted, err)
	}
	if _, err := migrate.Up(ctx, pool); err != nil {
		t.Fatal(err)
	}
}
