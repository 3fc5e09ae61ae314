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
	// Opening a new connection can take longer than 50 ms on a loaded
	// machine; a statement that kept its connection would still exhaust
	// the pool within this loop and wait out the longer bound.
	reuse := store.Bounded{Pool: db, Wait: 10 * time.Second}
	var n int
	for range int(db.Config().MaxConns) * 3 {
		if err := reuse.QueryRow(ctx, `SELECT 1`).Scan(&n); err != nil {
			t.Fatalf("a statement kept its connection: %v", err)
		}
		rows, err := reuse.Query(ctx, `SELECT 1`)
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
