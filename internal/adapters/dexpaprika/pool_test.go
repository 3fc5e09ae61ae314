package dexpaprika_test

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

// The registered adapter behind the session pool: Connect asks /usage,
// stores the manifest's tools, and calls reach the service with the stored key.
func TestThroughThePool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	svc := newService(t, false)
	id := adapterConnection(t, db, svc.URL)
	eng := newEngine(t, db)
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(pool.Close)
	login := mcppool.KeyLogin{DB: db, Engine: eng, Pool: pool}

	if _, err := login.Connect(ctx, id, "dp_not_a_key"); !errors.Is(err, mcppool.ErrKeyRejected) {
		t.Fatalf("bad key: %v", err)
	}
	if n := scalar(t, db, `SELECT count(*)::text FROM connection_credentials`); n != "0" {
		t.Fatalf("a rejected key was stored (%s rows)", n)
	}
	listed, err := login.Connect(ctx, id, freeKey)
	if err != nil || len(listed) != 7 || listed[0].Name != "dexpaprika_search" {
		t.Fatalf("connect: %v %+v", err, listed)
	}
	if got := scalar(t, db, `SELECT status || ' ' || account_hint FROM mcp_connections WHERE id = $1`, id); got != "connected plan free" {
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

// adapterConnection adds the manifest's DexPaprika row, pointed at url, with
// its curated tools, and a pending organisation connection to it.
func adapterConnection(t *testing.T, db *pgxpool.Pool, url string) string {
	t.Helper()
	ms, err := grants.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	var entry *grants.ServerInput
	for i := range ms {
		if *ms[i].Slug == "dexpaprika" {
			entry = &ms[i]
		}
	}
	if entry == nil || entry.Tools == nil {
		t.Fatal("no dexpaprika entry in the manifests")
	}
	ctx := context.Background()
	var id string
	if err := db.QueryRow(ctx, `WITH s AS (
INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config) VALUES ('dexpaprika', 'DexPaprika', 'adapter', 'http', $1, 'token', $2) RETURNING id),
o AS (INSERT INTO organisations (name, slug) VALUES ('acme', 'acme') RETURNING id)
INSERT INTO mcp_connections (server_id, owner_scope, owner_id) SELECT s.id, 'organisation', o.id FROM s, o RETURNING id`,
		url, string(entry.Config)).Scan(&id); err != nil {
		t.Fatal(err)
	}
	for i, tool := range *entry.Tools {
		if _, err := db.Exec(ctx, `INSERT INTO mcp_catalog_tools (server_id, name, description, input_schema, position)
			SELECT id, $1, $2, $3, $4 FROM mcp_servers WHERE slug = 'dexpaprika'`,
			tool.Name, tool.Description, string(tool.InputSchema), i); err != nil {
			t.Fatal(err)
		}
	}
	return id
}

func newEngine(t *testing.T, db *pgxpool.Pool) *connectors.Engine {
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
		Connectors: []connectors.Ref{{Provider: connectors.ProviderID("dexpaprika")}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return eng
}

func scalar(t *testing.T, db *pgxpool.Pool, sql string, args ...any) string {
	t.Helper()
	var s string
	if err := db.QueryRow(context.Background(), sql, args...).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}
