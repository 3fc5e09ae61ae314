// Package connectionstest writes and reads login rows for tests, so that
// fixtures outside internal/connections need no SQL on the logins table.
package connectionstest

import (
	"context"
	"errors"
	"testing"

	"github.com/guilds/guilds/internal/connections/connstore"
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
