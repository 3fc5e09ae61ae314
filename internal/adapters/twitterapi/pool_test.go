package twitterapi_test

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
// of the manifest, Connect with a bad then a good key, two tool calls.
func TestThroughPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := newService(t)
	e := adapterstest.New(t, "twitterapi", svc.URL)
	id, pool, login := e.ConnectionID, e.Pool, e.Login

	if _, err := login.Connect(ctx, id, "tapi-not-a-key"); !errors.Is(err, mcppool.ErrKeyRejected) {
		t.Fatalf("bad key: %v", err)
	}
	if n := e.Scalar(t, `SELECT count(*)::text FROM connection_credentials`); n != "0" {
		t.Fatalf("a rejected key was stored (%s rows)", n)
	}
	listed, err := login.Connect(ctx, id, goodKey)
	if err != nil || len(listed) != 10 || listed[0].Name != "twitterapi_search" {
		t.Fatalf("connect: %v %+v", err, listed)
	}
	if got := e.Scalar(t, `SELECT status FROM mcp_connections WHERE id = $1`, id); got != "connected" {
		t.Fatalf("status %q", got)
	}

	out, err := pool.Call(ctx, id, "user", json.RawMessage(`{"user":"jack"}`))
	if err != nil || !strings.Contains(out, "\n44196397\tjack\tName jack\t") {
		t.Fatalf("user: %q %v", out, err)
	}
	out, err = pool.Call(ctx, id, "trends", json.RawMessage(`{"limit":3}`))
	if err != nil || strings.Count(out, "\n") != 4 || strings.Contains(out, goodKey) {
		t.Fatalf("trends: %q %v", out, err)
	}
	_, err = pool.Call(ctx, id, "search", json.RawMessage(`{"query":"ratelimited"}`))
	if err == nil || !strings.Contains(err.Error(), "429") || strings.Contains(err.Error(), goodKey) {
		t.Fatalf("service error through the pool: %v", err)
	}
}
