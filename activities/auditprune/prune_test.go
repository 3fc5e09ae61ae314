package auditprune_test

import (
	"context"
	"testing"
	"time"

	"github.com/guilds/guilds/activities/auditprune"
	"github.com/guilds/guilds/internal/testdb"
)

// The prune deletes the events older than the retention and keeps the
// newer ones, whatever organisation they belong to.
func TestPruneKeepsWhatTheRetentionKeeps(t *testing.T) {
	db := testdb.New(t)
	ctx := context.Background()
	for _, age := range []string{"91 days", "120 days", "89 days", "1 hour", "0 seconds"} {
		if _, err := db.Exec(ctx, `INSERT INTO audit_events (at, action, tool) VALUES (now() - $1::interval, 'binding', $1)`, age); err != nil {
			t.Fatal(err)
		}
	}
	a := &auditprune.Activities{DB: db, Retention: 90 * 24 * time.Hour}
	n, err := a.Prune(ctx)
	if err != nil || n != 2 {
		t.Fatalf("pruned %d, %v", n, err)
	}
	var left []string
	rows, _ := db.Query(ctx, `SELECT tool FROM audit_events ORDER BY at`)
	for rows.Next() {
		var s string
		_ = rows.Scan(&s)
		left = append(left, s)
	}
	if len(left) != 3 || left[0] != "89 days" {
		t.Fatalf("left %v", left)
	}
	if n, err := a.Prune(ctx); err != nil || n != 0 {
		t.Fatalf("a second prune deleted %d, %v", n, err)
	}
	if _, err := (&auditprune.Activities{DB: db}).Prune(ctx); err == nil {
		t.Fatal("a prune without a retention ran")
	}
}
