package alchemy_test

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

// The registered adapter behind the session pool on a real Postgres. The
// catalog row points at a plain test server, so every chain (Solana's
// JSON-RPC too) is served there.
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

	if _, err := login.Connect(ctx, id, "alcht_notAKey0009"); !errors.Is(err, mcppool.ErrKeyRejected) {
		t.Fatalf("bad key: %v", err)
	}
	if n := scalar(t, db, `SELECT count(*)::text FROM connection_credentials`); n != "0" {
		t.Fatalf("a rejected key was stored (%s rows)", n)
	}
	listed, err := login.Connect(ctx, id, goodKey)
	if err != nil || len(listed) != 3 || listed[0].Name != "alchemy_holdings" {
		t.Fatalf("connect: %v %+v", err, listed)
	}
	if got := scalar(t, db, `SELECT status FROM mcp_connections WHERE id = $1`, id); got != "connected" {
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

// adapterConnection adds the manifest's Alchemy row, pointed at url, with its
// curated tools, and a pending organisation connection to it.
func adapterConnection(t *testing.T, db *pgxpool.Pool, url string) string {
	t.Helper()
	ms, err := grants.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	var entry *grants.ServerInput
	for i := range ms {
		if *ms[i].Slug == "alchemy" {
			entry = &ms[i]
		}
	}
	if entry == nil || entry.Tools == nil {
		t.Fatal("no alchemy entry in the manifests")
	}
	ctx := context.Background()
	var id string
	if err := db.QueryRow(ctx, `WITH s AS (
INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config) VALUES ('alchemy', 'Alchemy', 'adapter', 'http', $1, 'token', $2) RETURNING id),
o AS (INSERT INTO organisations (name, slug) VALUES ('acme', 'acme') RETURNING id)
INSERT INTO mcp_connections (server_id, owner_scope, owner_id) SELECT s.id, 'organisation', o.id FROM s, o RETURNING id`,
		url, string(entry.Config)).Scan(&id); err != nil {
		t.Fatal(err)
	}
	for i, tool := range *entry.Tools {
		if _, err := db.Exec(ctx, `INSERT INTO mcp_catalog_tools (server_id, name, description, input_schema, position)
			SELECT id, $1, $2, $3, $4 FROM mcp_servers WHERE slug = 'alchemy'`,
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
		Connectors: []connectors.Ref{{Provider: connectors.ProviderID("alchemy")}}})
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
