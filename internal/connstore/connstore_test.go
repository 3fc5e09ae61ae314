package connstore_test

import (
	"context"
	"errors"
	"testing"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
)

// A login of an agent reads back with its catalog row, typed kind, auth and
// status, and the owner placed in its guild and organisation; the lifecycle
// writes move it between the typed statuses.
func TestConnectionLifecycle(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	var serverID, orgID, guildID, agentID string
	if err := db.QueryRow(ctx, `WITH s AS (
INSERT INTO mcp_servers (slug, name, kind, transport, url, auth) VALUES ('peer', 'Peer', 'remote', 'http', 'https://peer.example/mcp', 'token') RETURNING id),
o AS (INSERT INTO organisations (name, slug) VALUES ('acme', 'acme') RETURNING id),
g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'g' FROM o RETURNING id, organisation_id),
a AS (INSERT INTO agents (guild_id, name) SELECT id, 'a' FROM g RETURNING id)
SELECT s.id::text, g.organisation_id::text, g.id::text, a.id::text FROM s, g, a`).Scan(&serverID, &orgID, &guildID, &agentID); err != nil {
		t.Fatal(err)
	}
	id, err := connstore.Insert(ctx, db, serverID, "agent", &agentID)
	if err != nil {
		t.Fatal(err)
	}
	c, err := connstore.Get(ctx, db, id)
	if err != nil {
		t.Fatal(err)
	}
	if c.Status != connstore.StatusPending || c.OrgID != orgID || c.GuildID != guildID || c.OwnerID != agentID ||
		c.Server.Kind != catalog.KindRemote || c.Server.Auth != catalog.AuthToken || c.Server.Slug != "peer" {
		t.Fatalf("Get = %+v", c)
	}
	if again, created, err := connstore.Ensure(ctx, db, "peer", "agent", c.OwnerUUID()); err != nil || again != id || created {
		t.Fatalf("Ensure = %v, %v, %v; want %v", again, created, err, id)
	}
	if other, created, err := connstore.Ensure(ctx, db, "peer", "platform", nil); err != nil || other == id || !created {
		t.Fatalf("Ensure at the platform = %v, %v, %v", other, created, err)
	}
	if err := connstore.SetConnectedKeepingHint(ctx, db, id, "@me"); err != nil {
		t.Fatal(err)
	}
	if err := connstore.SetConnectedKeepingHint(ctx, db, id, ""); err != nil {
		t.Fatal(err)
	}
	if c, _ = connstore.Get(ctx, db, id); c.Status != connstore.StatusConnected || c.AccountHint != "@me" {
		t.Fatalf("after connect: %s %q", c.Status, c.AccountHint)
	}
	if live, err := connstore.Live(ctx, db, []string{id.String()}); err != nil || !live[id.String()] {
		t.Fatalf("Live = %v, %v", live, err)
	}
	if err := connstore.SetDisconnected(ctx, db, id); err != nil {
		t.Fatal(err)
	}
	if live, _ := connstore.Live(ctx, db, []string{id.String()}); live[id.String()] {
		t.Fatal("a disconnected login is live")
	}
	if gone, err := connstore.DeleteNeverLoggedIn(ctx, db, id); err != nil || gone {
		t.Fatalf("DeleteNeverLoggedIn of a login that was connected = %v, %v", gone, err)
	}
	under, err := connstore.IDsUnder(ctx, db, "organisation", orgID)
	if err != nil || len(under) != 1 || under[0] != id.String() {
		t.Fatalf("IDsUnder = %v, %v", under, err)
	}
	if err := connstore.Delete(ctx, db, id); err != nil {
		t.Fatal(err)
	}
	if _, err := connstore.Get(ctx, db, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after Delete = %v", err)
	}
	if err := connstore.SetDisconnected(ctx, db, id); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("SetDisconnected of no login = %v", err)
	}
}

// A malformed id names no login.
func TestParseIDMalformed(t *testing.T) {
	if _, err := connstore.ParseID("not-a-uuid"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("ParseID = %v", err)
	}
}
