package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
)

func TestMapKeepsTheConstraintName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	if _, err := db.Exec(ctx, `CREATE TABLE t (k text CONSTRAINT t_k_key UNIQUE)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO t VALUES ('a')`); err != nil {
		t.Fatal(err)
	}
	_, err := db.Exec(ctx, `INSERT INTO t VALUES ('a')`)
	mapped := store.Map(err)
	if !errors.Is(mapped, store.ErrConflict) {
		t.Fatalf("mapped %v", mapped)
	}
	if got := store.Constraint(mapped); got != "t_k_key" {
		t.Errorf("constraint %q", got)
	}
	if mapped.Error() != "conflict: t_k_key" {
		t.Errorf("text %q", mapped.Error())
	}
	if got := store.Constraint(store.ErrNotFound); got != "" {
		t.Errorf("constraint of a plain sentinel %q", got)
	}
}
