package api_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
)

// lockOrg holds the organisation's row locked in a transaction of the test's
// own until the test ends, so that a handler updating it waits on the lock.
func lockOrg(t *testing.T, db *pgxpool.Pool, orgID string) {
	t.Helper()
	tx, err := db.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(context.Background()) })
	if _, err := tx.Exec(context.Background(), `SELECT id FROM organisations WHERE id = $1 FOR UPDATE`, orgID); err != nil {
		t.Fatal(err)
	}
}

// lockWaiters counts the backends of this database waiting on a lock for an
// update of organisations.
func lockWaiters(t *testing.T, db *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := db.QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'UPDATE organisations%'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitFor polls until cond holds; the bound only keeps a broken build from
// hanging the run, it is not what the test measures.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for range 600 {
		if cond() {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal(what)
}

func patchOrg(ctx context.Context, e *apitest.Env, orgID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "PATCH", e.HTTP.URL+"/api/orgs/"+orgID, strings.NewReader(`{"name":"Renamed"}`))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+e.AdminToken)
	req.Header.Set("Content-Type", "application/json")
	return http.DefaultClient.Do(req)
}

// A client that goes away stops its handler's database work: the update
// waiting on a locked row is cancelled, not left waiting, and nothing of it
// is applied once the lock is released.
func TestHandlerWorkEndsWhenTheClientGoes(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	org, _, _ := e.Hierarchy()
	lockOrg(t, e.DB, org)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		resp, err := patchOrg(ctx, e, org)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	waitFor(t, "the update never waited on the lock", func() bool { return lockWaiters(t, e.DB) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the client's request: %v", err)
	}
	waitFor(t, "the handler's update still waits on the lock after the client went away",
		func() bool { return lockWaiters(t, e.DB) == 0 })

	var name string
	if err := e.DB.QueryRow(context.Background(), `SELECT name FROM organisations WHERE id = $1`, org).Scan(&name); err != nil {
		t.Fatal(err)
	}
	if name == "Renamed" {
		t.Fatal("the abandoned update was applied")
	}
}

// A handler that outlives its deadline is stopped and answers 503 timeout,
// while the lock it waited on is still held.
func TestHandlerWorkEndsAtItsDeadline(t *testing.T) {
	e := apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) { d.HandlerTimeout = 300 * time.Millisecond }})
	org, _, _ := e.Hierarchy()
	lockOrg(t, e.DB, org)

	// The client's own bound only keeps a broken build from hanging.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := patchOrg(ctx, e, org)
	if err != nil {
		t.Fatalf("no answer while the lock was held: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	waitFor(t, "the handler's update still waits on the lock after its deadline",
		func() bool { return lockWaiters(t, e.DB) == 0 })
	var n int
	if err := e.DB.QueryRow(context.Background(), `SELECT count(*) FROM organisations WHERE id = $1 AND name = 'Renamed'`, org).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatal("the timed-out update was applied")
	}
}
