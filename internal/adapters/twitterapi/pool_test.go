package twitterapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// The adapter behind the session pool on a real Postgres: the catalog row
// of the manifest, Connect with a bad then a good key, two tool calls.
func TestThroughPool(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	svc := newService(t)
	id := adapterConnection(t, db, svc.URL)
	eng := engine(t, db)
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(pool.Close)
	login := mcppool.KeyLogin{DB: db, Engine: eng, Pool: pool}

	if _, err := login.Connect(ctx, id, "tapi-not-a-key"); !errors.Is(err, mcppool.ErrKeyRejected) {
		t.Fatalf("bad key: %v", err)
	}
	if n := scalar(t, db, `SELECT count(*)::text FROM connection_credentials`); n != "0" {
		t.Fatalf("a rejected key was stored (%s rows)", n)
	}
	listed, err := login.Connect(ctx, id, goodKey)
	if err != nil || len(listed) != 10 || listed[0].Name != "twitterapi_search" {
		t.Fatalf("connect: %v %+v", err, listed)
	}
	if got := scalar(t, db, `SELECT status FROM mcp_connections WHERE id = $1`, id); got != "connected" {
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

// adapterConnection inserts the manifest's twitterapi row (pointed at url)
// with its curated tools, and a pending organisation connection to it.
func adapterConnection(t *testing.T, db *pgxpool.Pool, url string) string {
	t.Helper()
	raw, err := os.ReadFile("../../grants/manifests.json")
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Servers []struct {
			Slug   string          `json:"slug"`
			Name   string          `json:"name"`
			Config json.RawMessage `json:"config"`
			Tools  []struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"input_schema"`
			} `json:"tools"`
		} `json:"servers"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, s := range m.Servers {
		if s.Slug != "twitterapi" {
			continue
		}
		var serverID, connID string
		if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
			VALUES ($1, $2, 'adapter', 'http', $3, 'token', $4) RETURNING id`, s.Slug, s.Name, url, s.Config).Scan(&serverID); err != nil {
			t.Fatal(err)
		}
		for i, tool := range s.Tools {
			if _, err := db.Exec(ctx, `INSERT INTO mcp_catalog_tools (server_id, name, description, input_schema, position)
				VALUES ($1, $2, $3, $4, $5)`, serverID, tool.Name, tool.Description, tool.InputSchema, i); err != nil {
				t.Fatal(err)
			}
		}
		if err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id)
			INSERT INTO mcp_connections (server_id, owner_scope, owner_id) SELECT $1, 'organisation', o.id FROM o RETURNING id`,
			serverID).Scan(&connID); err != nil {
			t.Fatal(err)
		}
		return connID
	}
	t.Fatal("no twitterapi entry in the manifests")
	return ""
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
		Connectors: []connectors.Ref{{Provider: connectors.ProviderID("twitterapi")}}})
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
