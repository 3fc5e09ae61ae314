package mcppool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	_ "github.com/guilds/guilds/internal/connectors/providers/configured"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// acmeHTTPConfig: a secret workspace header and a non-secret optional region.
const acmeHTTPConfig = `{"provider":"config","fields":[
	{"name":"workspace","label":"Workspace id","header":"X-Workspace"},
	{"name":"region","header":"X-Region","secret":false,"optional":true}]}`

type headerKey struct{}

// configRemote is a real MCP server behind httptest that serves requests
// carrying the accepted X-Workspace and answers 401 to the others; its
// headers tool says what the request carried.
type configRemote struct {
	*httptest.Server
	good      atomic.Pointer[string]
	requests  atomic.Int64 // requests that reached the MCP server
	unsent    atomic.Int64 // requests without X-Workspace
	withAuthz atomic.Int64 // requests with an Authorization header
	echoErr   atomic.Bool  // answer 502 quoting the headers
}

func newConfigRemote(t testing.TB, good string) *configRemote {
	r := &configRemote{}
	r.good.Store(&good)
	s := newMCP()
	s.AddTool(mcp.NewTool("headers", mcp.WithDescription("Say which configured headers arrived")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			h, _ := ctx.Value(headerKey{}).(http.Header)
			return mcp.NewToolResultText(fmt.Sprintf("workspace=%s region=%s", h.Get("X-Workspace"), h.Get("X-Region"))), nil
		})
	mcpHandler := server.NewStreamableHTTPServer(s, server.WithStateful(true),
		server.WithHTTPContextFunc(func(ctx context.Context, req *http.Request) context.Context {
			return context.WithValue(ctx, headerKey{}, req.Header.Clone())
		}))
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		ws := req.Header.Get("X-Workspace")
		if ws == "" {
			r.unsent.Add(1)
		}
		if req.Header.Get("Authorization") != "" {
			r.withAuthz.Add(1)
		}
		if r.echoErr.Load() {
			http.Error(w, "upstream failed for workspace "+ws, http.StatusBadGateway)
			return
		}
		if ws != *r.good.Load() {
			http.Error(w, "unknown workspace", http.StatusUnauthorized)
			return
		}
		r.requests.Add(1)
		mcpHandler.ServeHTTP(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *configRemote) accept(ws string) { r.good.Store(&ws) }

// pendingConnection adds a no-auth catalog row and an organisation's login
// of it, not connected yet.
func pendingConnection(t testing.TB, db *pgxpool.Pool, slug, transport, url, config string) string {
	t.Helper()
	var serverID, orgID string
	if err := db.QueryRow(context.Background(), `WITH s AS (
INSERT INTO mcp_servers (slug, name, transport, url, auth, config) VALUES ($1, $1, $2, $3, 'none', $4) RETURNING id),
o AS (INSERT INTO organisations (name, slug) VALUES ($1, $1) RETURNING id)
SELECT s.id::text, o.id::text FROM s, o`,
		slug, transport, url, config).Scan(&serverID, &orgID); err != nil {
		t.Fatal(err)
	}
	return connectionstest.Insert(t, db, serverID, "organisation", orgID)
}

func scalar(t testing.TB, db *pgxpool.Pool, sql string, args ...any) string {
	t.Helper()
	var s string
	if err := db.QueryRow(context.Background(), sql, args...).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// Every request of an http session carries the configured headers, resolved
// per request, and no Authorization.
func TestConfiguredHeadersOnEveryRequest(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rs := newConfigRemote(t, "ws-secret-1")
	id := addServerConnection(t, db, "acme", "http", rs.URL, "none", acmeHTTPConfig)
	eng := newEngine(t, db, "acme")
	if _, err := eng.ConnectKey(ctx, uuid.MustParse(id), map[string]string{"workspace": "ws-secret-1", "region": "eu-west-1"}); err != nil {
		t.Fatal(err)
	}
	p := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(p.Close)

	tools, err := p.Sync(ctx, id)
	if err != nil || len(tools) != 4 {
		t.Fatalf("Sync = %d tools, %v", len(tools), err)
	}
	// The server got the secret value (it echoes it); the call's answer
	// does not show it (docs/adr/0204-redact-what-the-call-used.md).
	out, err := p.Call(ctx, id, "headers", nil)
	if err != nil || out != "workspace=[REDACTED] region=eu-west-1" {
		t.Fatalf("call = %q, %v", out, err)
	}
	// New values reach the same session's next request.
	rs.accept("ws-secret-2")
	if _, err := eng.ConnectKey(ctx, uuid.MustParse(id), map[string]string{"workspace": "ws-secret-2"}); err != nil {
		t.Fatal(err)
	}
	if out, err := p.Call(ctx, id, "headers", nil); err != nil || out != "workspace=[REDACTED] region=" {
		t.Fatalf("after new values: %q, %v", out, err)
	}
	p.Close()
	if rs.requests.Load() < 4 || rs.unsent.Load() != 0 || rs.withAuthz.Load() != 0 {
		t.Fatalf("%d requests served, %d without the header, %d with Authorization", rs.requests.Load(), rs.unsent.Load(), rs.withAuthz.Load())
	}
}

// A no-auth server without a provider still gets nothing.
func TestPlainNoAuthServerGetsNoHeaders(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rs := newConfigRemote(t, "")
	id := addServerConnection(t, db, "plain", "http", rs.URL, "none", `{}`)
	eng := newEngine(t, db, "plain")
	p := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(p.Close)
	if out, err := p.Call(ctx, id, "headers", nil); err != nil || out != "workspace= region=" {
		t.Fatalf("call = %q, %v", out, err)
	}
}

func TestConnectConfigChecksValuesAgainstTheServer(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rs := newConfigRemote(t, "ws-good-3e8a")
	id := pendingConnection(t, db, "acme", "http", rs.URL, acmeHTTPConfig)
	eng := newEngine(t, db, "acme")
	var logs bytes.Buffer
	var mu sync.Mutex
	login := newKeyLogin(db, eng, slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(b)
	}), nil)))
	stored := func() string {
		return scalar(t, db, `SELECT (SELECT count(*) FROM connection_credentials)::text || ' ' || (SELECT count(*) FROM mcp_tools)::text`) +
			" " + connectionstest.StatusOr(t, db, id, "")
	}

	var fe *connectors.FieldsError
	if _, err := login.ConnectConfig(ctx, id, map[string]string{"colour": "red"}); !errors.As(err, &fe) || len(fe.Problems) != 2 {
		t.Fatalf("missing and unknown values: %v", err)
	}
	if _, err := login.ConnectConfig(ctx, id, map[string]string{"workspace": "ws-wrong-9"}); !errors.Is(err, mcppool.ErrConfigRejected) {
		t.Fatalf("refused values: %v", err)
	}
	rs.echoErr.Store(true)
	if _, err := login.ConnectConfig(ctx, id, map[string]string{"workspace": "ws-echoed-4c2d"}); !errors.Is(err, mcppool.ErrConfigUnchecked) {
		t.Fatalf("unreachable server: %v", err)
	}
	rs.echoErr.Store(false)
	if got := stored(); got != "0 0 pending" {
		t.Fatalf("after refusals: credentials, tools, status = %s", got)
	}

	listed, err := login.ConnectConfig(ctx, id, map[string]string{"workspace": "ws-good-3e8a", "region": "eu"})
	if err != nil || len(listed) != 4 {
		t.Fatalf("ConnectConfig = %d tools, %v", len(listed), err)
	}
	if got := stored(); got != "1 4 connected" {
		t.Fatalf("after connect: credentials, tools, status = %s", got)
	}
	if n := scalar(t, db, `SELECT count(*)::text FROM bindings WHERE connection_id = $1 AND enabled`, id); n != "1" {
		t.Fatalf("%s enabled bindings", n)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, v := range []string{"ws-wrong-9", "ws-echoed-4c2d", "ws-good-3e8a"} {
		if strings.Contains(logs.String(), v) {
			t.Fatalf("a value reached the log: %s", logs.String())
		}
	}
	if !strings.Contains(logs.String(), "configuration check failed") {
		t.Fatalf("the unreachable server was not logged: %s", logs.String())
	}
}

// A stdio server the platform runs receives the configured values as its
// environment, next to the allowed platform variables and nothing else.
func TestConfiguredEnvReachesStdioServer(t *testing.T) {
	ctx := context.Background()
	t.Setenv(platformSecretEnv, "postgres://platform:secret@db/guilds")
	db := testdb.New(t)
	cfg, _ := json.Marshal(map[string]any{"command": peerCommand(t), "args": []string{stdioPeerArg}, "provider": "config",
		"fields": []map[string]any{
			{"name": "workspace", "env": "ACME_WORKSPACE"},
			{"name": "api_base", "env": "ACME_API_BASE", "secret": false},
		}})
	id := pendingConnection(t, db, "localacme", "stdio", "", string(cfg))
	eng := newEngine(t, db, "localacme")

	// The check starts the server with the values, lists its tools and stops it.
	login := newKeyLogin(db, eng, nil)
	if _, err := login.ConnectConfig(ctx, id, map[string]string{"workspace": "ws-stdio-secret"}); err == nil {
		t.Fatal("a missing api_base was accepted")
	}
	listed, err := login.ConnectConfig(ctx, id, map[string]string{"workspace": "ws-stdio-secret", "api_base": "https://api.acme.test"})
	if err != nil || len(listed) != 7 {
		t.Fatalf("ConnectConfig = %d tools, %v", len(listed), err)
	}

	p := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(p.Close)
	for name, want := range map[string]string{"ACME_WORKSPACE": "[REDACTED]", "ACME_API_BASE": "https://api.acme.test", platformSecretEnv: ""} {
		out, err := p.Call(ctx, id, "getenv", json.RawMessage(`{"name":"`+name+`"}`))
		if err != nil || out != want {
			t.Errorf("%s = %q, %v; want %q", name, out, err, want)
		}
	}
	r := whoami(t, p, id)
	if r.Leaked != "" || !r.HasPath || len(r.MetaKeys) != 0 {
		t.Fatalf("the server must see PATH and its values, no platform secret and no _meta: %+v", r)
	}
	if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", r.PID)); err == nil {
		if !bytes.Contains(b, []byte("ACME_WORKSPACE=ws-stdio-secret\x00")) || bytes.Contains(b, []byte("platform:secret")) {
			t.Fatalf("the process's environment disagrees: %q", b)
		}
	}
}
