package connections_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
)

// peer is an mcp-go server with two tools behind a bearer check; down makes
// it answer 503.
func peer(t *testing.T, token string, down *atomic.Bool) string {
	s := server.NewMCPServer("peer", "1.0.0", server.WithToolCapabilities(false))
	ok := func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	}
	s.AddTool(mcp.NewTool("search", mcp.WithDescription("Search")), ok)
	s.AddTool(mcp.NewTool("fetch", mcp.WithDescription("Fetch")), ok)
	h := server.NewStreamableHTTPServer(s, server.WithStateful(true))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case down.Load():
			http.Error(w, "down", http.StatusServiceUnavailable)
		case r.Header.Get("Authorization") != "Bearer "+token:
			http.Error(w, "unauthorized", http.StatusUnauthorized)
		default:
			h.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

type env struct {
	db   *pgxpool.Pool
	eng  *connectors.Engine
	pool *mcppool.Pool
	id   string
}

// newEnv stores a checked token login of a remote server, as an exchange or
// a key check leaves it: a credential, the connection not yet connected.
func newEnv(t *testing.T, url string) env {
	t.Helper()
	ctx := context.Background()
	db := testdb.New(t)
	var id string
	if err := db.QueryRow(ctx, `WITH s AS (
INSERT INTO mcp_servers (slug, name, transport, url, auth, config) VALUES ('peer', 'peer', 'http', $1, 'token', '{"header":"Authorization","scheme":"Bearer"}') RETURNING id),
o AS (INSERT INTO organisations (name, slug) VALUES ('acme', 'acme') RETURNING id)
INSERT INTO mcp_connections (server_id, owner_scope, owner_id) SELECT s.id, 'organisation', o.id FROM s, o RETURNING id`, url).Scan(&id); err != nil {
		t.Fatal(err)
	}
	entry, err := secret.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := connectors.New(ctx, connectors.Options{DB: db, Keyring: keys, Connectors: []connectors.Ref{{Provider: "peer"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	if _, err := eng.ConnectKey(ctx, uuid.MustParse(id), map[string]string{"token": "tok-good-1"}); err != nil {
		t.Fatal(err)
	}
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(pool.Close)
	return env{db: db, eng: eng, pool: pool, id: id}
}

func (e env) scalar(t *testing.T, sql string) string {
	t.Helper()
	var s string
	if err := e.db.QueryRow(context.Background(), sql, e.id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// An OAuth login keeps the hint the exchange stored, gets its enabled
// binding, and its first listing is stored.
func TestFinishStoredHintAndFirstListing(t *testing.T) {
	var down atomic.Bool
	e := newEnv(t, peer(t, "tok-good-1", &down))
	if _, err := e.db.Exec(context.Background(), `UPDATE mcp_connections SET account_hint = 'acme.example' WHERE id = $1`, e.id); err != nil {
		t.Fatal(err)
	}
	d := connections.Deps{DB: e.db, Engine: e.eng, Sessions: e.pool}
	r, err := connections.Finish(context.Background(), d, e.id, connections.Options{HintFrom: connections.HintStored, CheckAdapter: true})
	if err != nil || r.AccountHint != "acme.example" || r.Tools != 2 || !r.FirstListing || r.ListErr != nil {
		t.Fatalf("Finish = %+v, %v", r, err)
	}
	if got := e.scalar(t, `SELECT status || ' ' || account_hint FROM mcp_connections WHERE id = $1`); got != "connected acme.example" {
		t.Fatalf("connection: %q", got)
	}
	if got := e.scalar(t, `SELECT count(*)::text FROM bindings WHERE connection_id = $1 AND enabled`); got != "1" {
		t.Fatalf("enabled bindings: %s", got)
	}
	if got := e.scalar(t, `SELECT string_agg(remote_name, ',' ORDER BY remote_name) FROM mcp_tools WHERE connection_id = $1`); got != "fetch,search" {
		t.Fatalf("stored tools: %q", got)
	}
}

// A failed first listing leaves the login connected and is reported, not
// returned; the terminal's flow skips it for a server that is not remote.
func TestFinishFailedFirstListing(t *testing.T) {
	var down atomic.Bool
	down.Store(true)
	e := newEnv(t, peer(t, "tok-good-1", &down))
	d := connections.Deps{DB: e.db, Engine: e.eng, Sessions: e.pool}
	r, err := connections.Finish(context.Background(), d, e.id, connections.Options{HintFrom: connections.HintStored})
	if err != nil || r.Tools != -1 || r.ListErr == nil || !r.FirstListing {
		t.Fatalf("Finish = %+v, %v", r, err)
	}
	if got := e.scalar(t, `SELECT status FROM mcp_connections WHERE id = $1`); got != "connected" {
		t.Fatalf("status after a failed listing: %q", got)
	}
	if _, err := e.db.Exec(context.Background(), `UPDATE mcp_servers SET kind = 'adapter'`); err != nil {
		t.Fatal(err)
	}
	r, err = connections.Finish(context.Background(), d, e.id, connections.Options{HintFrom: connections.HintStored, ListRemoteOnly: true})
	if err != nil || r.FirstListing {
		t.Fatalf("remote-only Finish of an adapter's login = %+v, %v", r, err)
	}
}

// A key login's listing is stored with the mark in one transaction: when
// the mark fails, no tool is left and the stored credential is wiped.
func TestFinishKeyLoginFailureWipesCredential(t *testing.T) {
	var down atomic.Bool
	e := newEnv(t, peer(t, "tok-good-1", &down))
	boom := errors.New("mark failed")
	d := connections.Deps{DB: e.db, Engine: e.eng, Sessions: e.pool,
		Mark: func(context.Context, store.DB, connstore.Connection, string) error { return boom }}
	listed := []grants.ListedTool{{Name: "search", Schema: []byte(`{"type":"object"}`)}}
	_, err := connections.Finish(context.Background(), d, e.id, connections.Options{HintFrom: connections.HintGiven, Hint: "@me", Listed: listed})
	if !errors.Is(err, boom) {
		t.Fatalf("Finish = %v", err)
	}
	if got := e.scalar(t, `SELECT count(*)::text FROM mcp_tools WHERE connection_id = $1`); got != "0" {
		t.Fatalf("tools left after a failed mark: %s", got)
	}
	if _, err := e.eng.Resolver().Token(context.Background(), uuid.MustParse(e.id)); err == nil {
		t.Fatal("the credential of a failed connect still resolves")
	}

	d.Mark = nil
	r, err := connections.Finish(context.Background(), d, e.id, connections.Options{HintFrom: connections.HintGiven, Hint: "@me", Listed: listed})
	if err != nil || r.Tools != 1 || r.FirstListing || r.AccountHint != "@me" {
		t.Fatalf("Finish = %+v, %v", r, err)
	}
	if got := e.scalar(t, `SELECT status || ' ' || account_hint FROM mcp_connections WHERE id = $1`); got != "connected @me" {
		t.Fatalf("connection: %q", got)
	}
}
