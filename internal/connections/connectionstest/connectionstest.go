// Package connectionstest writes and reads login rows for tests, so that
// fixtures outside internal/connections need no SQL on the logins table.
package connectionstest

import (
	"context"
	"errors"
	"testing"

	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
)

// Insert stores a pending login of a catalog server at one owner (ownerID ""
// at the platform scope) and returns its id.
func Insert(t testing.TB, db store.DB, serverID, ownerScope, ownerID string) string {
	t.Helper()
	var owner *string
	if ownerID != "" {
		owner = &ownerID
	}
	id, err := connstore.Insert(context.Background(), db, serverID, ownerScope, owner)
	if err != nil {
		t.Fatalf("connectionstest: insert a login of %s at %s: %v", serverID, ownerScope, err)
	}
	return id.String()
}

// Get reads a login.
func Get(t testing.TB, db store.DB, id string) connstore.Connection {
	t.Helper()
	cid, err := connstore.ParseID(id)
	if err == nil {
		var c connstore.Connection
		if c, err = connstore.Get(context.Background(), db, cid); err == nil {
			return c
		}
	}
	t.Fatalf("connectionstest: read the login %s: %v", id, err)
	return connstore.Connection{}
}

// Status is a login's status.
func Status(t testing.TB, db store.DB, id string) connstore.Status {
	t.Helper()
	return Get(t, db, id).Status
}

// SetConnected marks a login connected with an account hint.
func SetConnected(t testing.TB, db store.DB, id, accountHint string) {
	t.Helper()
	cid, err := connstore.ParseID(id)
	if err == nil {
		err = connstore.SetConnected(context.Background(), db, cid, accountHint)
	}
	if err != nil {
		t.Fatalf("connectionstest: mark the login %s connected: %v", id, err)
	}
}

// SetDisconnected marks a login disconnected.
func SetDisconnected(t testing.TB, db store.DB, id string) {
	t.Helper()
	cid, err := connstore.ParseID(id)
	if err == nil {
		err = connstore.SetDisconnected(context.Background(), db, cid)
	}
	if err != nil {
		t.Fatalf("connectionstest: mark the login %s disconnected: %v", id, err)
	}
}

// Exists reports whether a login is stored.
func Exists(t testing.TB, db store.DB, id string) bool {
	t.Helper()
	cid, err := connstore.ParseID(id)
	if err != nil {
		return false
	}
	_, err = connstore.Get(context.Background(), db, cid)
	if err == nil {
		return true
	}
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("connectionstest: read the login %s: %v", id, err)
	}
	return false
}

// InsertAs stores a login of a catalog server at one owner with a status
// (pending, connected or disconnected) and returns its id.
func InsertAs(t testing.TB, db store.DB, serverID, ownerScope, ownerID string, status connstore.Status) string {
	t.Helper()
	id := Insert(t, db, serverID, ownerScope, ownerID)
	switch status {
	case connstore.StatusConnected:
		SetConnected(t, db, id, "")
	case connstore.StatusDisconnected:
		SetDisconnected(t, db, id)
	}
	return id
}

// InsertOf stores a pending login of the catalog server with a slug.
func InsertOf(t testing.TB, db store.DB, slug, ownerScope, ownerID string) string {
	t.Helper()
	var serverID string
	if err := db.QueryRow(context.Background(), `SELECT id::text FROM mcp_servers WHERE slug = $1`, slug).Scan(&serverID); err != nil {
		t.Fatalf("connectionstest: no catalog server %s: %v", slug, err)
	}
	return Insert(t, db, serverID, ownerScope, ownerID)
}

// OfServer lists the logins of the catalog server with a slug (or id).
func OfServer(t testing.TB, db store.DB, slug string) []string {
	t.Helper()
	ids, err := connstore.IDsOfServer(context.Background(), db, slug)
	if err != nil {
		t.Fatalf("connectionstest: the logins of %s: %v", slug, err)
	}
	return ids
}

// OnlyOf is the one login of the catalog server with a slug.
func OnlyOf(t testing.TB, db store.DB, slug string) string {
	t.Helper()
	ids := OfServer(t, db, slug)
	if len(ids) != 1 {
		t.Fatalf("connectionstest: %d logins of %s, want one", len(ids), slug)
	}
	return ids[0]
}

// Count is how many logins are stored.
func Count(t testing.TB, db store.DB) int {
	t.Helper()
	all, err := connstore.All(context.Background(), db)
	if err != nil {
		t.Fatalf("connectionstest: count the logins: %v", err)
	}
	return len(all)
}

// StatusOr is a login's status, or absent when it is not stored.
func StatusOr(t testing.TB, db store.DB, id, absent string) string {
	t.Helper()
	if !Exists(t, db, id) {
		return absent
	}
	return string(Status(t, db, id))
}

// Delete removes a login (its bindings, tools and credential cascade).
func Delete(t testing.TB, db store.DB, id string) {
	t.Helper()
	cid, err := connstore.ParseID(id)
	if err == nil {
		err = connstore.Delete(context.Background(), db, cid)
	}
	if err != nil {
		t.Fatalf("connectionstest: delete the login %s: %v", id, err)
	}
}
