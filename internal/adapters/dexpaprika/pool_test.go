package dexpaprika_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
	"github.com/guilds/guilds/internal/mcppool"
)

// The registered adapter behind the session pool: Connect asks /usage,
// stores the manifest's tools, and calls reach the service with the stored key.
func TestThroughThePool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := newService(t, false)
	e := adapterstest.New(t, "dexpaprika", svc.URL)
	id, pool, login := e.ConnectionID, e.Pool, e.Login

	if _, err := login.Connect(ctx, id, "dp_not_a_key"); !errors.Is(err, mcppool.ErrKeyRejected) {
		t.Fatalf("bad key: %v", err)
	}
	if n := e.Credentials(t); n != "0" {
		t.Fatalf("a rejected key was stored (%s rows)", n)
	}
	listed, err := login.Connect(ctx, id, freeKey)
	if err != nil || len(listed) != 7 || listed[0].Name != "dexpaprika_search" {
		t.Fatalf("connect: %v %+v", err, listed)
	}
	if got := e.Hint(t); got != "connected plan free" {
		t.Fatalf("connection: %q", got)
	}

	out, err := pool.Call(ctx, id, "pools", json.RawMessage(`{"network":"ethereum","limit":2}`))
	if err != nil || len(lines(out)) != 3 || !strings.HasPrefix(out, "pool\tdex\t") {
		t.Fatalf("pools: %q %v", out, err)
	}
	if got := svc.last().Header.Get("Authorization"); got != freeKey {
		t.Fatalf("the stored key was not sent as the whole header: %q", got)
	}
	out, err = pool.Call(ctx, id, "prices", json.RawMessage(`{"network":"ethereum","addresses":["`+weth+`"]}`))
	if err != nil || out != "address\tprice_usd\tlast_updated\n"+weth+"\t3456.78\t2026-09-28T13:06:30Z\n" {
		t.Fatalf("prices: %q %v", out, err)
	}
	noKey(t, out, err, freeKey)
}
