package alchemy_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
	"github.com/guilds/guilds/internal/mcppool"
)

// The registered adapter behind the session pool on a real Postgres. The
// catalog row points at a plain test server, so every chain (Solana's
// JSON-RPC too) is served there.
func TestThroughThePool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := newService(t, false)
	e := adapterstest.New(t, "alchemy", svc.URL)
	id, pool, login := e.ConnectionID, e.Pool, e.Login

	if _, err := login.Connect(ctx, id, "alcht_notAKey0009"); !errors.Is(err, mcppool.ErrKeyRejected) {
		t.Fatalf("bad key: %v", err)
	}
	if n := e.Scalar(t, `SELECT count(*)::text FROM connection_credentials`); n != "0" {
		t.Fatalf("a rejected key was stored (%s rows)", n)
	}
	listed, err := login.Connect(ctx, id, goodKey)
	if err != nil || len(listed) != 3 || listed[0].Name != "alchemy_holdings" {
		t.Fatalf("connect: %v %+v", err, listed)
	}
	if got := e.Scalar(t, `SELECT status FROM mcp_connections WHERE id = $1`, id); got != "connected" {
		t.Fatalf("status %q", got)
	}
	if got := svc.last().Path; got != "/"+goodKey+"/getNFTsForOwner" {
		t.Fatalf("check path %q", got)
	}

	out, err := pool.Call(ctx, id, "holdings", json.RawMessage(`{"owner":"`+ownerAddr+`","limit":2}`))
	if err != nil || len(lines(out)) != 6 || !strings.HasPrefix(out, "contract\ttoken_id\t") || !strings.HasSuffix(out, "next_page_key\tpk2\n") {
		t.Fatalf("holdings: %q %v", out, err)
	}
	noKey(t, out, err, goodKey)
	out, err = pool.Call(ctx, id, "holdings", json.RawMessage(`{"owner":"`+solOwner+`","chain":"solana","limit":2}`))
	if err != nil || len(lines(out)) != 5 || svc.last().Path != "/v2/"+goodKey {
		t.Fatalf("solana holdings: %q %v (%s)", out, err, svc.last().Path)
	}
	out, err = pool.Call(ctx, id, "collection", json.RawMessage(`{"contract":"`+baycAddr+`"}`))
	if err != nil || !strings.Contains(out, "\tBored Ape Yacht Club\tboredapeyachtclub\t") {
		t.Fatalf("collection: %q %v", out, err)
	}
	_, err = pool.Call(ctx, id, "holdings", json.RawMessage(`{"owner":"0x0000000000000000000000000000000000000002"}`))
	if err == nil || !strings.Contains(err.Error(), "400") {
		t.Fatalf("service error through the pool: %v", err)
	}
	noKey(t, "", err, goodKey)
}
