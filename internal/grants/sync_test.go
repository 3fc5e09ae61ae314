package grants_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/testdb"
)

func listing(n int, prefix string) []grants.ListedTool {
	list := make([]grants.ListedTool, n)
	for i := range list {
		list[i] = grants.ListedTool{Name: fmt.Sprintf("%s_%05d", prefix, i), Description: "a listed tool",
			Schema: []byte(`{"type":"object","properties":{"q":{"type":"string"}}}`)}
	}
	return list
}

func storedNames(t *testing.T, db *pgxpool.Pool, connectionID string) []string {
	t.Helper()
	rows, err := db.Query(context.Background(), `SELECT remote_name FROM mcp_tools WHERE connection_id = $1 ORDER BY remote_name`, connectionID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	return out
}

// A listing is stored in one transaction: one that fails half-way (here the
// database refuses one tool's row, after the tools no longer listed were
// deleted) leaves the previous listing whole; one past MaxListedTools is
// refused with why before anything is written.
func TestSyncIsOneTransactionAndCapped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	if err := grants.Seed(ctx, db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	org, _, _ := hierarchy(t, db)
	c, _, err := connections.Connect(ctx, db, admin, nil, connections.ConnectInput{Slug: "wallet", OwnerScope: grants.ScopeOrganisation, OwnerID: org.ID})
	if err != nil {
		t.Fatal(err)
	}
	if err := connections.MarkConnected(ctx, db, c.ID, "0xab…cd"); err != nil {
		t.Fatal(err)
	}
	before := listing(3, "old")
	if err := grants.SyncListedTools(ctx, db, c.ID, before); err != nil {
		t.Fatal(err)
	}
	want := strings.Join(storedNames(t, db, c.ID), ",")

	if _, err := db.Exec(ctx, `CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'poisoned tool'; END $$;
		CREATE TRIGGER refuse_poison BEFORE INSERT ON mcp_tools FOR EACH ROW WHEN (NEW.remote_name = 'poison')
		EXECUTE FUNCTION refuse_poison()`); err != nil {
		t.Fatal(err)
	}
	failing := append(listing(5000, "new"), grants.ListedTool{Name: "poison"})
	if err := grants.SyncListedTools(ctx, db, c.ID, failing); err == nil || !strings.Contains(err.Error(), "poisoned tool") {
		t.Fatalf("a listing the database refuses: %v", err)
	}
	if got := strings.Join(storedNames(t, db, c.ID), ","); got != want {
		t.Fatalf("a failed listing left %d tools, want the previous %q", len(strings.Split(got, ",")), want)
	}

	err = grants.SyncListedTools(ctx, db, c.ID, listing(grants.MaxListedTools+1, "many"))
	if err == nil || !strings.Contains(err.Error(), "holds 10001 tools; at most 10000 of one login are kept") {
		t.Fatalf("a listing past the cap: %v", err)
	}
	if got := strings.Join(storedNames(t, db, c.ID), ","); got != want {
		t.Fatalf("a refused listing changed the stored one")
	}
	// Inside the caller's transaction it is a savepoint: the caller's own
	// writes before it stay theirs to commit.
	tx, err := db.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if err := grants.SyncListedTools(ctx, tx, c.ID, failing); err == nil {
		t.Fatal("the poisoned listing went through in a transaction")
	}
	if err := grants.SyncListedTools(ctx, tx, c.ID, listing(4, "tx")); err != nil {
		t.Fatalf("the caller's transaction is unusable after a failed listing: %v", err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if got := storedNames(t, db, c.ID); len(got) != 4 || got[0] != "tx_00000" {
		t.Fatalf("stored after the transaction: %v", got)
	}
}
