package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
)

// A saturated pool answers ErrBusy once the acquire bound passes, and a
// finished statement gives its connection back at once.
func TestBoundedPoolRefusesWhenSaturated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	b := store.Bounded{Pool: db, Wait: 50 * time.Millisecond}
	var n int
	for range int(db.Config().MaxConns) * 3 {
		if err := b.QueryRow(ctx, `SELECT 1`).Scan(&n); err != nil {
			t.Fatalf("a statement kept its connection: %v", err)
		}
		rows, err := b.Query(ctx, `SELECT 1`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
		}
	}
	for range db.Config().MaxConns {
		c, err := db.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
	}
	if _, err := b.Exec(ctx, `SELECT 1`); !errors.Is(err, store.ErrBusy) {
		t.Fatalf("saturated pool: %v", err)
	}
	if err := b.InTx(ctx, nil); !errors.Is(err, store.ErrBusy) {
		t.Fatalf("saturated pool, transaction: %v", err)
	}
}

func TestPoolSizeHasAFloor(t *testing.T) {
	if store.PoolSize() < 8 {
		t.Fatalf("pool size %d", store.PoolSize())
	}
}
