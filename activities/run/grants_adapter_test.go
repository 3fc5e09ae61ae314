package run_test

import (
	"context"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/testdb"
)

type recordingLister struct {
	mu  sync.Mutex
	ids []string
	age time.Duration
}

func (r *recordingLister) Refresh(_ context.Context, id string, maxAge time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ids = append(r.ids, id)
	r.age = maxAge
	return nil
}

// TestRunStartRefreshesTheChainsRemoteLogins: at run start the connected remote
// MCP logins along the agent's chain (and only those) get their stored tool
// list refreshed when it is older than ten minutes.
func TestRunStartRefreshesTheChainsRemoteLogins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	if err := grants.Seed(ctx, db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	var org, other, guild, agent string
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('A','a') RETURNING id`).Scan(&org))
	must(db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('B','b') RETURNING id`).Scan(&other))
	must(db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1,'g') RETURNING id`, org).Scan(&guild))
	must(db.QueryRow(ctx, `INSERT INTO agents (guild_id, name) VALUES ($1,'x') RETURNING id`, guild).Scan(&agent))
	login := func(slug, scope, owner string, status connstore.Status) string {
		id := connectionstest.InsertOf(t, db, slug, scope, owner)
		if status == connstore.StatusConnected {
			connectionstest.SetConnected(t, db, id, "")
		}
		return id
	}
	want := []string{
		login("notion", "guild", guild, "connected"),
		login("sentry", "organisation", org, "connected"),
	}
	login("notion", "organisation", other, "connected") // another organisation's
	login("etherscan", "agent", agent, "pending")       // not connected yet
	login("coingecko", "agent", agent, "connected")     // a local adapter has no session to list
	sort.Strings(want)

	lists := &recordingLister{}
	o := runact.GrantsOfferer{S: grants.NewService(grantstest.Registry(), integrations.New(nil), slog.New(slog.DiscardHandler)), Lists: lists}
	if _, err := o.Offered(ctx, db, agent, "direct"); err != nil {
		t.Fatal(err)
	}
	sort.Strings(lists.ids)
	if len(lists.ids) != len(want) || lists.ids[0] != want[0] || lists.ids[1] != want[1] {
		t.Fatalf("refreshed %v, want %v", lists.ids, want)
	}
	if lists.age != 10*time.Minute {
		t.Errorf("max age %v", lists.age)
	}
}
