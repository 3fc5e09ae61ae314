package mcppool_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/testdb"
)

// A key the server refuses through one replica's pool is reconnect-required
// on another replica at its next lookup. That replica's periodic recheck is
// pushed an hour out, so only the engine's invalidation can make this pass.
func TestRejectedLoginIsSeenByOtherReplicas(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	const key = "key-rejected-0123456789"
	rs := newRemote(t, "Authorization")
	rs.allow("Bearer " + key)
	id := addConnection(t, db, "refusing", rs.URL, "token", `{}`)
	uid := uuid.MustParse(id)
	keys, rdb := replicaShared(t)
	a := newReplica(t, db, keys, "refusing", rdb, connectors.Timing{})
	b := newReplica(t, db, keys, "refusing", rdb, connectors.Timing{Recheck: time.Hour})
	if _, err := a.eng.ConnectKey(ctx, uid, map[string]string{"token": key}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.pool.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if _, err := b.eng.Resolver().Token(ctx, uid); err != nil {
		t.Fatalf("the other replica before the rejection: %v", err)
	}

	rs.revoke("Bearer " + key)
	if _, err := a.pool.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); !errors.Is(err, &connectors.ErrReconnectRequired{}) {
		t.Fatalf("call with the refused key: %v", err)
	}
	var state, code string
	if err := db.QueryRow(ctx, `SELECT state, last_error_code FROM connection_credentials WHERE connection_id = $1`, id).Scan(&state, &code); err != nil {
		t.Fatal(err)
	}
	status := connectionstest.Status(t, db, id)
	if status != "disconnected" || state != "reconnect_required" || code != "token_rejected" {
		t.Fatalf("stored: status=%s state=%s code=%s", status, state, code)
	}
	waitUntil(t, "the other replica to see the login reconnect-required", func() bool {
		_, err := b.eng.Resolver().Token(ctx, uid)
		var rr *connectors.ErrReconnectRequired
		return errors.As(err, &rr) && rr.Code == "token_rejected"
	})
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
