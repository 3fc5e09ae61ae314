package mcppool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/tools"
)

// newMCP returns an mcp-go server with an echo tool, a dotted tool and an
// erroring tool.
func newMCP(opts ...server.ServerOption) *server.MCPServer {
	s := server.NewMCPServer("fake", "1.0.0", append([]server.ServerOption{server.WithToolCapabilities(false)}, opts...)...)
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo the text"), mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("pages.search", mcp.WithDescription("Search pages")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("no pages"), nil
		})
	s.AddTool(mcp.NewTool("fail"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("quota exceeded"), nil
	})
	return s
}

// remote is a stateful MCP server of the handshake era on httptest behind a
// header check; restart swaps in a fresh server, so old session ids get 404.
// A stateless remote speaks 2026-07-28 instead.
type remote struct {
	*httptest.Server
	h       atomic.Pointer[http.Handler]
	header  string
	allowed sync.Map // accepted header values
	seen    atomic.Int64
	reject  atomic.Int64 // requests to answer 401 whatever their key
	echoErr atomic.Bool  // answer 502 quoting the credential header
	lastVal atomic.Pointer[string]
	// stateless: the server speaks 2026-07-28 (no session)
	stateless bool
	// extensions: what a stateless server lists in capabilities.extensions
	extensions map[string]any
}

func newRemote(t testing.TB, header string) *remote {
	return startRemote(t, &remote{header: header})
}

func newStatelessRemote(t testing.TB, header string) *remote {
	return startRemote(t, &remote{header: header, stateless: true})
}

// newAdvertisingRemote is a stateless remote that lists the MCP Apps and
// Tasks extensions among its capabilities, as a server using them does.
func newAdvertisingRemote(t testing.TB, header string) *remote {
	return startRemote(t, &remote{header: header, stateless: true, extensions: advertisedExtensions})
}

var advertisedExtensions = map[string]any{
	tools.AppExtension:     map[string]any{"mimeTypes": []string{tools.AppMediaType}},
	mcppool.TasksExtension: map[string]any{},
}

// eachEra runs a test against a remote of each protocol era.
func eachEra(t *testing.T, test func(t *testing.T, newRemote func(testing.TB, string) *remote)) {
	t.Run("handshake", func(t *testing.T) { test(t, newRemote) })
	t.Run("stateless", func(t *testing.T) { test(t, newStatelessRemote) })
}

func startRemote(t testing.TB, r *remote) *remote {
	r.restart()
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		v := req.Header.Get(r.header)
		r.lastVal.Store(&v)
		if r.echoErr.Load() {
			http.Error(w, "upstream failed for "+v, http.StatusBadGateway)
			return
		}
		_, ok := r.allowed.Load(v)
		if ok && r.reject.Load() > 0 && r.reject.Add(-1) >= 0 {
			ok = false
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		r.seen.Add(1)
		(*r.h.Load()).ServeHTTP(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

func (r *remote) restart() {
	h := handshakeOnly(server.NewStreamableHTTPServer(newMCP(), server.WithStateful(true)))
	if r.stateless {
		h = server.NewStreamableHTTPServer(newMCP(server.WithExtensions(r.extensions)))
	}
	r.h.Store(&h)
}

func (r *remote) rejectNext(n int64) { r.reject.Store(n) }

func (r *remote) allow(v string)  { r.allowed.Store(v, true) }
func (r *remote) revoke(v string) { r.allowed.Delete(v) }

// creds is an in-memory credential source: Refresh moves to the next token.
type creds struct {
	mu        sync.Mutex
	tokens    map[uuid.UUID][]string
	refreshes int
	rejected  map[uuid.UUID]string // code, as the engine's MarkRejected stores it
}

func (c *creds) Token(_ context.Context, id uuid.UUID) (connectors.Credential, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if code, ok := c.rejected[id]; ok {
		return connectors.Credential{}, &connectors.ErrReconnectRequired{ConnectionID: id, Code: code}
	}
	ts := c.tokens[id]
	if len(ts) == 0 {
		return connectors.Credential{}, connectors.ErrNoCredential
	}
	return connectors.Credential{AccessToken: ts[0]}, nil
}

func (c *creds) Refresh(_ context.Context, id uuid.UUID) (connectors.Credential, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshes++
	ts := c.tokens[id]
	if len(ts) > 1 {
		ts = ts[1:]
		c.tokens[id] = ts
	}
	return connectors.Credential{AccessToken: ts[0]}, nil
}

// MarkRejected makes later lookups answer reconnect-required, as the engine's
// does for every replica.
func (c *creds) MarkRejected(_ context.Context, id uuid.UUID, code string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rejected == nil {
		c.rejected = map[uuid.UUID]string{}
	}
	c.rejected[id] = code
	return nil
}

func (c *creds) rejectedCode(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rejected[uuid.MustParse(id)]
}

// addConnection inserts a catalog row and a connected login for it.
func addConnection(t testing.TB, db *pgxpool.Pool, slug, url, auth, config string) string {
	t.Helper()
	ctx := context.Background()
	var sid string
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
VALUES ($1, $1, 'http', $2, $3, $4) ON CONFLICT (slug) DO UPDATE SET url = EXCLUDED.url RETURNING id`,
		slug, url, auth, config).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	return connectionstest.InsertAs(t, db, sid, "organisation", uuid.NewString(), connstore.StatusConnected)
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// handshakeOnly makes an MCP server of the handshake era: server/discover is
// an unknown method. Tests of what only that era has (session ids, a DELETE
// at close, listings without a ttlMs hint) use it.
func handshakeOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			var m struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(body, &m) == nil && m.Method == "server/discover" {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"error":{"code":-32601,"message":"Method not found"}}`))
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// keyLogin is the connect service over the pool's Checker, as the API
// builds it for a remote server's key or values.
type keyLogin struct{ svc *connections.Service }

func newKeyLogin(db *pgxpool.Pool, eng *connectors.Engine, log *slog.Logger) keyLogin {
	return keyLogin{&connections.Service{DB: db, Engine: eng, Log: log, Checker: mcppool.Checker{DB: db, Engine: eng, Log: log}}}
}

// ConnectConfig checks and stores a login's values and answers the tools
// the check listed.
func (k keyLogin) ConnectConfig(ctx context.Context, id string, values map[string]string) ([]grants.ListedTool, error) {
	r, err := k.svc.ConnectKey(ctx, id, values, "")
	return r.Listed, err
}
