package connections_test

import (
	"context"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// rowReads counts the statements that read a login's row (a SELECT from
// mcp_connections), as a pgx tracer sees them.
type rowReads struct {
	mu  sync.Mutex
	sql []string
}

var readsLogin = regexp.MustCompile(`(?is)^\s*(WITH .*)?SELECT .*FROM mcp_connections\b`)

func (r *rowReads) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if readsLogin.MatchString(d.SQL) {
		r.mu.Lock()
		r.sql = append(r.sql, d.SQL)
		r.mu.Unlock()
	}
	return ctx
}

func (r *rowReads) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *rowReads) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sql)
}

// maxKeyConnectReads is how many times one key connect through the service
// may read its login's row: opening it (the locking lookup and the load
// after the insert), the engine's record as it stores the key, and the
// fresh row the connect answers. The checker, the finish, the mark and the
// listing are given the row Connect loaded. Issue 36 counted 9 before
// (docs/adr/0623).
const maxKeyConnectReads = 4

// tracedService is the connect service (with the MCP checker and the
// adapter host) over a fresh database whose every statement reads passes
// the tracer, with one token MCP server (peer) and one organisation.
func tracedService(t *testing.T) (*connections.Service, *rowReads, string) {
	t.Helper()
	ctx := context.Background()
	var down atomic.Bool
	url := peer(t, "tok-good-0123", &down)
	plain := testdb.New(t)
	reads := &rowReads{}
	cfg := plain.Config()
	cfg.ConnConfig.Tracer = reads
	db, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	var orgID string
	if err := db.QueryRow(ctx, `WITH s AS (
INSERT INTO mcp_servers (slug, name, transport, url, auth, config) VALUES ('peer', 'peer', 'http', $1, 'token', '{"header":"Authorization","scheme":"Bearer"}')),
o AS (INSERT INTO organisations (name, slug) VALUES ('acme', 'acme') RETURNING id)
SELECT id::text FROM o`, url).Scan(&orgID); err != nil {
		t.Fatal(err)
	}
	entry, _ := secret.GenerateKey("k1")
	keys, _ := secret.ParseKeyring(entry)
	eng, err := connectors.New(ctx, connectors.Options{DB: db, Keyring: keys, Connectors: []connectors.Ref{{Provider: "peer"}, {Provider: "pair"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return &connections.Service{DB: db, Engine: eng, Integrations: integrations.New(func(string) string { return "" }),
		Checker: mcppool.Checker{DB: db, Engine: eng}, Adapters: host.New(host.Options{DB: db, Credentials: eng.Resolver()})}, reads, orgID
}

// connectCounting runs one connect and answers how many times it read the
// login's row, failing above the bound.
func connectCounting(t *testing.T, svc *connections.Service, reads *rowReads, req connections.Request, tools int) {
	t.Helper()
	before := reads.count()
	out, err := svc.Connect(context.Background(), access.Principal{UserID: "u", Admin: true}, req)
	if err != nil || out.Tools != tools {
		t.Fatalf("Connect = %+v, %v", out, err)
	}
	n := reads.count() - before
	t.Logf("one key connect of %s read its login's row %d times", req.Login.Slug, n)
	if n > maxKeyConnectReads {
		reads.mu.Lock()
		defer reads.mu.Unlock()
		for _, q := range reads.sql[before:] {
			t.Log(regexp.MustCompile(`\s+`).ReplaceAllString(q, " ")[:120])
		}
		t.Fatalf("one key connect read its login's row %d times, want at most %d", n, maxKeyConnectReads)
	}
}

// One key connect reads the login's row a bounded number of times, whatever
// the engine, the checker and the finish need of it: a remote server's key
// and a local adapter's several keys alike.
func TestKeyConnectReadsItsRowFewTimes(t *testing.T) {
	ctx := context.Background()
	svc, reads, orgID := tracedService(t)
	connectCounting(t, svc, reads, connections.Request{Key: "tok-good-0123",
		Login: connections.ConnectInput{Slug: "peer", OwnerScope: grants.ScopeOrganisation, OwnerID: orgID}}, 2)

	if _, err := svc.DB.Exec(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
		VALUES ('pair', 'pair', 'adapter', 'http', 'http://127.0.0.1:9', 'token', '{"adapter":"pair-test","key_fields":[{"name":"left"},{"name":"right"}]}')`); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.DB.Exec(ctx, `INSERT INTO mcp_catalog_tools (server_id, name, description, input_schema, position)
		SELECT id, 'look', 'Look', '{"type":"object"}', 0 FROM mcp_servers WHERE slug = 'pair'`); err != nil {
		t.Fatal(err)
	}
	connectCounting(t, svc, reads, connections.Request{Values: map[string]string{"left": "left-good-0123", "right": "right-good-0123"},
		Login: connections.ConnectInput{Slug: "pair", OwnerScope: grants.ScopeOrganisation, OwnerID: orgID}}, 1)
}
