package x_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
	"github.com/guilds/guilds/internal/mcppool"
)

// The adapter behind the session pool on a real Postgres: the catalog row
// of the manifest, Connect with a bad then a good token, tool calls.
func TestThroughPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := newService(t)
	e := adapterstest.New(t, "x", svc.api())
	id, pool, login := e.ConnectionID, e.Pool, e.Login
	toolCount := e.Tools

	if _, err := login.Connect(ctx, id, "AAAAnot%3Da-token"); !errors.Is(err, mcppool.ErrKeyRejected) {
		t.Fatalf("bad token: %v", err)
	}
	if n := e.Scalar(t, `SELECT count(*)::text FROM connection_credentials`); n != "0" {
		t.Fatalf("a rejected token was stored (%s rows)", n)
	}
	listed, err := login.Connect(ctx, id, goodKey)
	if err != nil || len(listed) != toolCount || listed[0].Name != "x_search" {
		t.Fatalf("connect: %v %+v", err, listed)
	}
	if got := e.Scalar(t, `SELECT status FROM mcp_connections WHERE id = $1`, id); got != "connected" {
		t.Fatalf("status %q", got)
	}
	if hint := e.Scalar(t, `SELECT coalesce(account_hint, '') FROM mcp_connections WHERE id = $1`, id); strings.Contains(hint, goodKey) {
		t.Fatal("the token is in the account hint")
	}

	out, err := pool.Call(ctx, id, "user", json.RawMessage(`{"user":"XDevelopers"}`))
	if err != nil || !strings.Contains(out, "\n2244994945\tXDevelopers\tName XDevelopers\t583423\t") {
		t.Fatalf("user: %q %v", out, err)
	}
	out, err = pool.Call(ctx, id, "search", json.RawMessage(`{"query":"from:XDevelopers","limit":3}`))
	if err != nil || strings.Count(out, "\n") != 4 || strings.Contains(out, goodKey) {
		t.Fatalf("search: %q %v", out, err)
	}
	_, err = pool.Call(ctx, id, "search", json.RawMessage(`{"query":"ratelimited"}`))
	if err == nil || !strings.Contains(err.Error(), "429") || strings.Contains(err.Error(), goodKey) {
		t.Fatalf("service error through the pool: %v", err)
	}
}
