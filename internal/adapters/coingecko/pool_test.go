package coingecko_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// catalogRow writes the coingecko catalog row, pointed at url, with the
// manifest's curated tools, and a pending organisation login for it.
func catalogRow(t *testing.T, db *pgxpool.Pool, url string) (connectionID string, toolCount int) {
	t.Helper()
	ctx := context.Background()
	servers, err := grants.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	var tools []grants.CatalogTool
	for _, s := range servers {
		if *s.Slug == "coingecko" {
			tools = *s.Tools
		}
	}
	if len(tools) != 8 {
		t.Fatalf("the manifest lists %d coingecko tools", len(tools))
	}
	var serverID string
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
		VALUES ('coingecko', 'CoinGecko', 'adapter', 'http', $1, 'token', '{"adapter":"coingecko"}') RETURNING id`, url).Scan(&serverID); err != nil {
		t.Fatal(err)
	}
	for i, tool := range tools {
		if _, err := db.Exec(ctx, `INSERT INTO mcp_catalog_tools (server_id, name, description, input_schema, position)
			VALUES ($1, $2, $3, $4, $5)`, serverID, tool.Name, tool.Description, string(tool.InputSchema), i); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id)
		INSERT INTO mcp_connections (server_id, owner_scope, owner_id) SELECT $1, 'organisation', o.id FROM o RETURNING id`,
		serverID).Scan(&connectionID); err != nil {
		t.Fatal(err)
	}
	return connectionID, len(tools)
}

func engine(t *testing.T, db *pgxpool.Pool) *connectors.Engine {
	t.Helper()
	entry, err := secret.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := connectors.New(context.Background(), connectors.Options{DB: db, Keyring: keys,
		Connectors: []connectors.Ref{{Provider: "coingecko"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return eng
}

// Through the session pool on a real database: Connect asks /ping with the
// key (a wrong one stores nothing), writes the manifest's tools, and calls
// reach the adapter with the stored key.
func TestThroughPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	f := newFakeGecko(t)
	id, toolCount := catalogRow(t, db, f.URL)
	eng := engine(t, db)
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(pool.Close)
	login := mcppool.KeyLogin{DB: db, Engine: eng, Pool: pool}

	_, err := login.Connect(ctx, id, "CG-wrong-secret-999")
	if !errors.Is(err, mcppool.ErrKeyRejected) {
		t.Fatalf("wrong key: %v", err)
	}
	var stored int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM connection_credentials`).Scan(&stored); err != nil || stored != 0 {
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
	if err := db.QueryRow(ctx, `SELECT status FROM mcp_connections WHERE id = $1`, id).Scan(&status); err != nil || status != "connected" {
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
	if err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mcp_connections WHERE id = $1 AND account_hint LIKE '%' || $2 || '%')`,
		id, goodKey).Scan(&leaked); err != nil || leaked {
		t.Fatalf("the key is in the account hint: %v", err)
	}
}
