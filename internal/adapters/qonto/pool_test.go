package qonto_test

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

// The registered adapter behind the session pool on a real Postgres: Connect
// refuses a key without its login half and a key the service refuses, stores
// the good one with the manifest's tools and the organisation's name, and
// calls reach the service with login:secret_key as the header.
func TestThroughThePool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	svc := newService(t)
	id := adapterConnection(t, db, svc.URL)
	eng := newEngine(t, db)
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(pool.Close)
	login := mcppool.KeyLogin{DB: db, Engine: eng, Pool: pool}

	for _, bad := range []string{secretKey, "acme-sas-4821:not-the-secret"} {
		if _, err := login.Connect(ctx, id, bad); !errors.Is(err, mcppool.ErrKeyRejected) {
			t.Fatalf("bad key: %v", err)
		}
	}
	if n := scalar(t, db, `SELECT count(*)::text FROM connection_credentials`); n != "0" {
		t.Fatalf("a rejected key was stored (%s rows)", n)
	}
	listed, err := login.Connect(ctx, id, goodKey)
	if err != nil || len(listed) != 4 || listed[0].Name != "qonto_list_bank_accounts" {
		t.Fatalf("connect: %v %+v", err, listed)
	}
	if got := scalar(t, db, `SELECT status || ' ' || account_hint FROM mcp_connections WHERE id = $1`, id); got != "connected Acme SAS" {
		t.Fatalf("connection: %q", got)
	}

	out, err := pool.Call(ctx, id, "list_bank_accounts", json.RawMessage(`{}`))
	if err != nil || len(lines(out)) != 3 || !strings.Contains(out, mainID+"\tMain account\t") {
		t.Fatalf("list_bank_accounts: %q %v", out, err)
	}
	noKey(t, out, err)
	out, err = pool.Call(ctx, id, "list_missing_invoices", json.RawMessage(`{"limit":2}`))
	if err != nil || len(lines(out)) != 3 || !strings.HasPrefix(lines(out)[1], txID(2, 0)+"\t") {
		t.Fatalf("list_missing_invoices: %q %v", out, err)
	}
	noKey(t, out, err)
	_, err = pool.Call(ctx, id, "upload_invoice", json.RawMessage(`{"transaction_id":"`+txID(1, 0)+`","path":"/home/agent/a.pdf"}`))
	if err == nil || !strings.Contains(err.Error(), "agent workspace") {
		t.Fatalf("upload_invoice through the pool: %v", err)
	}
	noKey(t, "", err)
}

// adapterConnection adds the manifest's Qonto row, pointed at url, with its
// curated tools, and a pending organisation connection to it.
func adapterConnection(t *testing.T, db *pgxpool.Pool, url string) string {
	t.Helper()
	ms, err := grants.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	var entry *grants.ServerInput
	for i := range ms {
		if *ms[i].Slug == "qonto" {
			entry = &ms[i]
		}
	}
	if entry == nil || entry.Tools == nil {
		t.Fatal("no qonto entry in the manifests")
	}
	ctx := context.Background()
	var id string
	if err := db.QueryRow(ctx, `WITH s AS (
INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config) VALUES ('qonto', 'Qonto', 'adapter', 'http', $1, 'token', $2) RETURNING id),
o AS (INSERT INTO organisations (name, slug) VALUES ('acme', 'acme') RETURNING id)
INSERT INTO mcp_connections (server_id, owner_scope, owner_id) SELECT s.id, 'organisation', o.id FROM s, o RETURNING id`,
		url, string(entry.Config)).Scan(&id); err != nil {
		t.Fatal(err)
	}
	for i, tool := range *entry.Tools {
		if _, err := db.Exec(ctx, `INSERT INTO mcp_catalog_tools (server_id, name, description, input_schema, position)
			SELECT id, $1, $2, $3, $4 FROM mcp_servers WHERE slug = 'qonto'`,
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
		Connectors: []connectors.Ref{{Provider: connectors.ProviderID("qonto")}}})
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
