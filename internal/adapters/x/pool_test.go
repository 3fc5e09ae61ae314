package x_test

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

// The adapter behind the session pool on a real Postgres: the catalog row
// of the manifest, Connect with a bad then a good token, tool calls.
func TestThroughPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	svc := newService(t)
	id, toolCount := catalogRow(t, db, svc.api())
	eng := engine(t, db)
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(pool.Close)
	login := mcppool.KeyLogin{DB: db, Engine: eng, Pool: pool}

	if _, err := login.Connect(ctx, id, "AAAAnot%3Da-token"); !errors.Is(err, mcppool.ErrKeyRejected) {
		t.Fatalf("bad token: %v", err)
	}
	if n := scalar(t, db, `SELECT count(*)::text FROM connection_credentials`); n != "0" {
		t.Fatalf("a rejected token was stored (%s rows)", n)
	}
	listed, err := login.Connect(ctx, id, goodKey)
	if err != nil || len(listed) != toolCount || listed[0].Name != "x_search" {
		t.Fatalf("connect: %v %+v", err, listed)
	}
	if got := scalar(t, db, `SELECT status FROM mcp_connections WHERE id = $1`, id); got != "connected" {
		t.Fatalf("status %q", got)
	}
	if hint := scalar(t, db, `SELECT coalesce(account_hint, '') FROM mcp_connections WHERE id = $1`, id); strings.Contains(hint, goodKey) {
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

// catalogRow writes the manifest's x row, pointed at url, with its curated
// tools, and a pending organisation login for it.
func catalogRow(t *testing.T, db *pgxpool.Pool, url string) (connectionID string, toolCount int) {
	t.Helper()
	ctx := context.Background()
	servers, err := grants.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range servers {
		if *s.Slug != "x" {
			continue
		}
		var serverID string
		if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
			VALUES ($1, $2, 'adapter', 'http', $3, 'token', $4) RETURNING id`, *s.Slug, *s.Name, url, string(s.Config)).Scan(&serverID); err != nil {
			t.Fatal(err)
		}
		for i, tool := range *s.Tools {
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
		return connectionID, len(*s.Tools)
	}
	t.Fatal("no x entry in the manifests")
	return "", 0
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
		Connectors: []connectors.Ref{{Provider: connectors.ProviderID("x")}}})
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
