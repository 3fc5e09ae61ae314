package mcppool_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// sseRemote is an mcp-go SSE server behind httptest that checks the bearer
// token of every request, the stream's GET and each message POST alike.
// restart swaps in a fresh server and ends the old one's streams, as a
// process restart would: the old session ids are unknown to the new one.
type sseRemote struct {
	*httptest.Server
	h        atomic.Pointer[server.SSEServer]
	allowed  sync.Map // accepted Authorization values
	streams  atomic.Int64
	posts    atomic.Int64
	lastAuth atomic.Pointer[string]

	mu       sync.Mutex
	sessions map[string]string // session id → the Authorization values it carried (one expected)
}

func newSSERemote(t testing.TB) *sseRemote {
	r := &sseRemote{sessions: map[string]string{}}
	r.h.Store(server.NewSSEServer(newMCP()))
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		v := req.Header.Get("Authorization")
		r.lastAuth.Store(&v)
		if _, ok := r.allowed.Load(v); !ok {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if req.Method == http.MethodGet {
			r.streams.Add(1)
		} else {
			r.posts.Add(1)
			if sid := req.URL.Query().Get("sessionId"); sid != "" {
				r.mu.Lock()
				if prev, ok := r.sessions[sid]; ok && prev != v {
					r.sessions[sid] = prev + " | " + v
				} else if !ok {
					r.sessions[sid] = v
				}
				r.mu.Unlock()
			}
		}
		r.h.Load().ServeHTTP(w, req)
	}))
	t.Cleanup(func() {
		r.h.Load().CloseSessions()
		r.CloseClientConnections()
		r.Close()
	})
	return r
}

func (r *sseRemote) allow(v string)  { r.allowed.Store(v, true) }
func (r *sseRemote) revoke(v string) { r.allowed.Delete(v) }

func (r *sseRemote) restart() {
	old := r.h.Swap(server.NewSSEServer(newMCP()))
	old.CloseSessions()
}

func (r *sseRemote) last() string {
	if p := r.lastAuth.Load(); p != nil {
		return *p
	}
	return ""
}

// sessionsSeen returns the session ids the server saw, each with the
// Authorization values it carried.
func (r *sseRemote) sessionsSeen() map[string]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[string]string, len(r.sessions))
	for k, v := range r.sessions {
		out[k] = v
	}
	return out
}

// addServerConnection inserts a catalog row of any transport and a connected
// login for it.
func addServerConnection(t testing.TB, db *pgxpool.Pool, slug, transport, url, auth, config string) string {
	t.Helper()
	ctx := context.Background()
	var sid string
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
VALUES ($1, $1, $2, $3, $4, $5) ON CONFLICT (slug) DO UPDATE SET url = EXCLUDED.url RETURNING id`,
		slug, transport, url, auth, config).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	return connectionstest.InsertAs(t, db, sid, "organisation", uuid.NewString(), connstore.StatusConnected)
}

// newEngine builds the connector engine on db with a generated keyring and no
// Redis; slug's catalog row puts connectors in use (no plugin: the row's
// header, or Authorization: Bearer).
func newEngine(t testing.TB, db *pgxpool.Pool, slug string) *connectors.Engine {
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
		Connectors: []connectors.Ref{{Provider: connectors.ProviderID(slug)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return eng
}

func connectKey(t testing.TB, eng *connectors.Engine, id, key string) {
	t.Helper()
	if _, err := eng.ConnectKey(context.Background(), uuid.MustParse(id), map[string]string{"token": key}); err != nil {
		t.Fatal(err)
	}
}

// The credential comes from the engine's resolver on every request: a key
// stored anew is sent by the next call on the same session.
func TestSSEListCallAndPerRequestCredential(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rs := newSSERemote(t)
	rs.allow("Bearer key-1-sse-0")
	id := addServerConnection(t, db, "ssedemo", "sse", rs.URL+"/sse", "token", `{"header":"Authorization","scheme":"Bearer"}`)
	eng := newEngine(t, db, "ssedemo")
	connectKey(t, eng, id, "key-1-sse-0")
	p := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(p.Close)

	tools, err := p.Sync(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, tl := range tools {
		names[tl.Name] = tl.RemoteName
	}
	if len(tools) != 3 || names["ssedemo_pages_search"] != "pages.search" || names["ssedemo_echo"] != "echo" {
		t.Fatalf("listed %v", names)
	}
	if stored, err := mcppool.Stored(ctx, db, id); err != nil || len(stored) != 3 {
		t.Fatalf("stored %v %v", stored, err)
	}
	out, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || out != "echo: hi" {
		t.Fatalf("call = %q, %v", out, err)
	}
	if out, err := p.Call(ctx, id, "fail", nil); err != nil || out != "ERROR: quota exceeded" {
		t.Fatalf("erroring tool = %q, %v", out, err)
	}

	rs.allow("Bearer key-2-sse-0")
	connectKey(t, eng, id, "key-2-sse-0")
	streams := rs.streams.Load()
	if out, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"again"}`)); err != nil || out != "echo: again" {
		t.Fatalf("after a new key: %q, %v", out, err)
	}
	if rs.last() != "Bearer key-2-sse-0" || rs.streams.Load() != streams {
		t.Fatalf("sent %q, streams %d→%d: the new key must ride the same session", rs.last(), streams, rs.streams.Load())
	}
	if len(rs.sessionsSeen()) != 1 {
		t.Fatalf("sessions %v", rs.sessionsSeen())
	}
}

// A token the server starts refusing gets one refresh and one retry.
func TestSSEUnauthorizedRefreshesOnceThenRetries(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rs := newSSERemote(t)
	rs.allow("Bearer old")
	id := addServerConnection(t, db, "ssedemo", "sse", rs.URL+"/sse", "oauth", `{}`)
	cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {"old", "new"}}}
	p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
	t.Cleanup(p.Close)
	if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"1"}`)); err != nil {
		t.Fatal(err)
	}
	rs.revoke("Bearer old")
	rs.allow("Bearer new")
	out, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"2"}`))
	if err != nil || out != "echo: 2" || cr.refreshes != 1 || rs.last() != "Bearer new" {
		t.Fatalf("after 401: %q %v refreshes=%d last=%q", out, err, cr.refreshes, rs.last())
	}
	// The refreshed token is refused too: no loop, the login needs reconnecting.
	rs.revoke("Bearer new")
	_, err = p.Call(ctx, id, "echo", json.RawMessage(`{"text":"3"}`))
	if !errors.Is(err, &connectors.ErrReconnectRequired{}) || cr.refreshes != 2 {
		t.Fatalf("refused fresh token: %v refreshes=%d", err, cr.refreshes)
	}
}

func TestSSEConnectionsDoNotShareSessions(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rs := newSSERemote(t)
	rs.allow("Bearer a")
	rs.allow("Bearer b")
	a := addServerConnection(t, db, "ssedemo", "sse", rs.URL+"/sse", "oauth", `{}`)
	b := addServerConnection(t, db, "ssedemo", "sse", rs.URL+"/sse", "oauth", `{}`)
	cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(a): {"a"}, uuid.MustParse(b): {"b"}}}
	p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
	t.Cleanup(p.Close)
	for _, c := range []struct{ id, want string }{{a, "Bearer a"}, {b, "Bearer b"}, {a, "Bearer a"}, {b, "Bearer b"}} {
		if _, err := p.Call(ctx, c.id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
			t.Fatal(err)
		}
		if got := rs.last(); got != c.want {
			t.Fatalf("connection %s sent %q", c.id, got)
		}
	}
	seen := rs.sessionsSeen()
	if len(seen) != 2 || rs.streams.Load() != 2 {
		t.Fatalf("want two sessions on two streams, got %v, %d streams", seen, rs.streams.Load())
	}
	for sid, auth := range seen {
		if auth != "Bearer a" && auth != "Bearer b" {
			t.Fatalf("session %s carried %q", sid, auth)
		}
	}
}

// A restarted server forgot the session and ended its stream: the next call
// opens a new session and succeeds.
func TestSSELostSessionIsReinitialised(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rs := newSSERemote(t)
	rs.allow("Bearer a")
	id := addServerConnection(t, db, "ssedemo", "sse", rs.URL+"/sse", "oauth", `{}`)
	cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {"a"}}}
	p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
	t.Cleanup(p.Close)
	if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"1"}`)); err != nil {
		t.Fatal(err)
	}
	rs.restart()
	out, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"2"}`))
	if err != nil || out != "echo: 2" {
		t.Fatalf("after restart: %q %v", out, err)
	}
	if rs.streams.Load() != 2 || len(rs.sessionsSeen()) != 2 {
		t.Fatalf("streams=%d sessions=%v", rs.streams.Load(), rs.sessionsSeen())
	}
	if out, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"3"}`)); err != nil || out != "echo: 3" || rs.streams.Load() != 2 {
		t.Fatalf("the new session is reused: %q %v streams=%d", out, err, rs.streams.Load())
	}
}
