package coingecko_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
	"github.com/guilds/guilds/internal/mcppool"
)

// Through the session pool on a real database: Connect asks /ping with the
// key (a wrong one stores nothing), writes the manifest's tools, and calls
// reach the adapter with the stored key.
func TestThroughPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFakeGecko(t)
	e := adapterstest.New(t, "coingecko", f.URL)
	id, pool, login := e.ConnectionID, e.Pool, e.Login
	toolCount := e.Tools

	_, err := login.Connect(ctx, id, "CG-wrong-secret-999")
	if !errors.Is(err, mcppool.ErrKeyRejected) {
		t.Fatalf("wrong key: %v", err)
	}
	var stored int
	if err := e.DB.QueryRow(ctx, `SELECT count(*) FROM connection_credentials`).Scan(&stored); err != nil || stored != 0 {
		t.Fatalf("a rejected key was stored: %d %v", stored, err)
	}

	listed, err := login.Connect(ctx, id, goodKey)
	if err != nil || len(listed) != toolCount {
		t.Fatalf("connect: %v, %d tools", err, len(listed))
	}
	names := map[string]bool{}
	for _, tool := range listed {
		names[tool.Name] = true
	}
	if !names["coingecko_prices"] || !names["coingecko_chart"] {
		t.Fatalf("listed: %v", names)
	}
	var status string
	if err := e.DB.QueryRow(ctx, `SELECT status FROM mcp_connections WHERE id = $1`, id).Scan(&status); err != nil || status != "connected" {
		t.Fatalf("status %q %v", status, err)
	}

	out, err := pool.Call(ctx, id, "prices", json.RawMessage(`{"ids":["bitcoin"]}`))
	if err != nil || !strings.HasPrefix(out, "id\tprice_usd\t") || !strings.Contains(out, "\nbitcoin\t67187\t") {
		t.Fatalf("prices: %q %v", out, err)
	}
	out, err = pool.Call(ctx, id, "chart", json.RawMessage(`{"id":"bitcoin","days":2}`))
	if err != nil || len(lines(out)) != 49 {
		t.Fatalf("chart: %d lines %v", len(lines(out)), err)
	}
	_, err = pool.Call(ctx, id, "coin", json.RawMessage(`{"id":"no-such-coin"}`))
	if err == nil || !strings.Contains(err.Error(), "404") || strings.Contains(err.Error(), goodKey) {
		t.Fatalf("unknown coin: %v", err)
	}
	var leaked bool
	if err := e.DB.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mcp_connections WHERE id = $1 AND account_hint LIKE '%' || $2 || '%')`,
		id, goodKey).Scan(&leaked); err != nil || leaked {
		t.Fatalf("the key is in the account hint: %v", err)
	}
}
