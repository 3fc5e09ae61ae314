package mcppool_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// waitBound is the failure bound of the waits below: wide, since each waits
// for an event and a loaded machine may take long to deliver it.
const waitBound = 2 * time.Minute

// hearing waits until p listens on the login channel and returns synced,
// which returns once p has heard every change committed before it was
// called: it announces a marker of its own after them and waits for it
// (notifications arrive in commit order).
func hearing(t *testing.T, db *pgxpool.Pool, p *mcppool.Pool) (synced func()) {
	t.Helper()
	var mu sync.Mutex
	heard := map[string]bool{}
	wake := make(chan struct{}, 1)
	mcppool.OnHeard(p, func(id string) {
		mu.Lock()
		heard[id] = true
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	waitFor(t, "the pool to listen for login changes", func() bool { return mcppool.Listening(p) })
	return func() {
		t.Helper()
		marker := uuid.NewString()
		if err := connstore.Announce(context.Background(), db, []string{marker}); err != nil {
			t.Fatal(err)
		}
		deadline := time.After(waitBound)
		for {
			mu.Lock()
			ok := heard[marker]
			mu.Unlock()
			if ok {
				return
			}
			select {
			case <-wake:
			case <-deadline:
				t.Fatal("the pool did not hear the login channel")
			}
		}
	}
}

// waitFor polls cond (a state: no event to wait on) within waitBound.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// queryCounter counts the queries a pgx pool sends.
type queryCounter struct{ n atomic.Int64 }

func (q *queryCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	q.n.Add(1)
	return ctx
}

func (q *queryCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// secondPool is another set of connections to db's database, as another
// process has: what it changes reaches the first only through PostgreSQL.
func secondPool(t *testing.T, db *pgxpool.Pool, tracer pgx.QueryTracer) *pgxpool.Pool {
	t.Helper()
	cfg := db.Config().Copy()
	cfg.ConnConfig.Tracer = tracer
	p, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// While the pool hears the login channel, a call on an open session reads
// nothing from PostgreSQL: the login's row is kept in memory.
func TestCallReadsNoRowWhileListening(t *testing.T) {
	eachEra(t, func(t *testing.T, newRemote func(testing.TB, string) *remote) {
		ctx := context.Background()
		base := testdb.New(t)
		var queries queryCounter
		db := secondPool(t, base, &queries)
		rs := newRemote(t, "Authorization")
		rs.allow("Bearer a")
		id := addConnection(t, db, "kept", rs.URL, "oauth", `{}`)
		p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {"a"}}}})
		t.Cleanup(p.Close)
		hearing(t, base, p)
		if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
			t.Fatal(err)
		}
		before := queries.n.Load()
		for range 5 {
			if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
				t.Fatal(err)
			}
		}
		if n := queries.n.Load() - before; n != 0 {
			t.Fatalf("5 calls sent %d queries", n)
		}
	})
}

// A login deleted or disconnected by another process (its own engine, pool
// and connections) is refused by this pool at its next call once the
// change is heard, with no request reaching the server. This replica hears
// no Redis and rechecks its credentials hourly, so its resolver still holds
// the key: only the pool's own check can refuse.
func TestLoginChangedElsewhereIsRefusedAtItsNextCall(t *testing.T) {
	for _, change := range []string{"deleted", "disconnected"} {
		t.Run(change, func(t *testing.T) {
			ctx := context.Background()
			db := testdb.New(t)
			other := secondPool(t, db, nil)
			const key = "key-elsewhere-0123456789"
			rs := newRemote(t, "Authorization")
			rs.allow("Bearer " + key)
			slug := "elsewhere" + change
			id := addConnection(t, db, slug, rs.URL, "token", `{}`)
			uid := uuid.MustParse(id)
			keys, _ := replicaShared(t)
			a := newReplica(t, db, keys, slug, nil, connectors.Timing{Recheck: time.Hour})
			b := newReplica(t, other, keys, slug, nil, connectors.Timing{})
			synced := hearing(t, db, a.pool)
			if _, err := b.eng.ConnectKey(ctx, uid, map[string]string{"token": key}); err != nil {
				t.Fatal(err)
			}
			synced()
			for range 2 {
				if _, err := a.pool.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
					t.Fatalf("call before the change: %v", err)
				}
			}

			switch change {
			case "deleted":
				if err := connections.DeleteConnection(ctx, other, access.Principal{Admin: true}, id); err != nil {
					t.Fatal(err)
				}
			case "disconnected":
				if err := b.eng.Disconnect(ctx, uid); err != nil {
					t.Fatal(err)
				}
			}
			synced()
			if _, err := a.eng.Resolver().Token(ctx, uid); err != nil {
				t.Fatalf("the resolver was meant to still hold the key: %v", err)
			}
			before := rs.seen.Load()
			_, err := a.pool.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`))
			switch change {
			case "deleted":
				if !errors.Is(err, connectors.ErrUnknownConnection) {
					t.Fatalf("call after the delete: %v", err)
				}
			case "disconnected":
				if !errors.Is(err, &connectors.ErrReconnectRequired{}) {
					t.Fatalf("call after the disconnect: %v", err)
				}
			}
			if n := rs.seen.Load() - before; n != 0 {
				t.Fatalf("%d requests reached the server after the change", n)
			}
		})
	}
}

// A login disconnected and connected again with a new key by another
// process is served with the new key at this pool's next call: the kept
// "disconnected" row is dropped when the reconnect is heard, and the
// resolver (hearing Redis, as deployed) hands out the new key.
func TestLoginReconnectedElsewhereIsServedWithItsNewKey(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	other := secondPool(t, db, nil)
	const oldKey, newKey = "key-old-0123456789", "key-new-0123456789"
	rs := newRemote(t, "Authorization")
	rs.allow("Bearer " + oldKey)
	id := addConnection(t, db, "rekeyed", rs.URL, "token", `{}`)
	uid := uuid.MustParse(id)
	keys, rdb := replicaShared(t)
	a := newReplica(t, db, keys, "rekeyed", rdb, connectors.Timing{Recheck: time.Hour})
	b := newReplica(t, other, keys, "rekeyed", rdb, connectors.Timing{})
	synced := hearing(t, db, a.pool)
	if _, err := b.eng.ConnectKey(ctx, uid, map[string]string{"token": oldKey}); err != nil {
		t.Fatal(err)
	}
	synced()
	if _, err := a.pool.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if err := b.eng.Disconnect(ctx, uid); err != nil {
		t.Fatal(err)
	}
	synced()
	if _, err := a.pool.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); !errors.Is(err, &connectors.ErrReconnectRequired{}) {
		t.Fatalf("call while disconnected: %v", err)
	}

	rs.revoke("Bearer " + oldKey)
	rs.allow("Bearer " + newKey)
	if _, err := b.eng.ConnectKey(ctx, uid, map[string]string{"token": newKey}); err != nil {
		t.Fatal(err)
	}
	synced()
	waitFor(t, "this replica's resolver to serve the new key", func() bool {
		c, err := a.eng.Resolver().Token(ctx, uid)
		return err == nil && c.AccessToken == newKey
	})
	if _, err := a.pool.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatalf("call after the reconnect: %v", err)
	}
	if v := rs.lastVal.Load(); v == nil || *v != "Bearer "+newKey {
		t.Fatalf("the server last saw %v", v)
	}
}

// A catalog row changed and announced (as grants.UpdateServer does) sends
// the login's next call where the row now points, on a new session.
func TestChangedCatalogRowIsUsedAtTheNextCall(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	first, second := newHeaderRecorder(t), newHeaderRecorder(t)
	id := addConnection(t, db, "moved", first.URL, "none", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, SweepEvery: -1})
	t.Cleanup(p.Close)
	synced := hearing(t, db, p)
	if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	var serverID string
	if err := db.QueryRow(ctx, `UPDATE mcp_servers SET url = $1 WHERE slug = 'moved' RETURNING id::text`, second.URL).Scan(&serverID); err != nil {
		t.Fatal(err)
	}
	if err := connstore.AnnounceServer(ctx, db, serverID); err != nil {
		t.Fatal(err)
	}
	synced()
	if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	if n, _ := second.carried(""); n == 0 {
		t.Fatal("the call after the change did not reach the row's new URL")
	}
}

// Notifications sent while the pool's listening connection is down are
// lost, so a pool that listens again has dropped every row it kept: a login
// disconnected with no notification at all (a raw write) is refused at the
// next call after the reconnection.
func TestListeningAgainDropsTheKeptRows(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	srv := newHeaderRecorder(t)
	id := addConnection(t, db, "relisten", srv.URL, "none", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, SweepEvery: -1})
	t.Cleanup(p.Close)
	hearing(t, db, p)
	if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	listens := mcppool.Listens(p)
	if _, err := db.Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query = $1`, "LISTEN "+connstore.Channel); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pool to listen again", func() bool { return mcppool.Listens(p) > listens })
	if _, err := db.Exec(ctx, `UPDATE mcp_connections SET status = 'disconnected' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); !errors.Is(err, &connectors.ErrReconnectRequired{}) {
		t.Fatalf("call after listening again: %v", err)
	}
}

// A tool's listed output schema is kept with the login's row: a structured
// result is checked with no query, and a new listing stored by another
// process (with another schema) is used from the next call on.
func TestOutputSchemaIsKeptUntilTheLoginIsListedAgain(t *testing.T) {
	ctx := context.Background()
	base := testdb.New(t)
	var queries queryCounter
	db := secondPool(t, base, &queries)
	const numeric = `{"type":"object","properties":{"temperature":{"type":"number"}}}`
	const text = `{"type":"object","properties":{"temperature":{"type":"string"}}}`
	peer := func(schema string) http.Handler {
		s := server.NewMCPServer("weather", "1.0.0", server.WithToolCapabilities(false))
		s.AddTool(mcp.NewTool("now", mcp.WithRawOutputSchema(json.RawMessage(schema))),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{StructuredContent: map[string]any{"temperature": "warm"}}, nil
			})
		return server.NewStreamableHTTPServer(s)
	}
	var h atomic.Pointer[http.Handler]
	first := peer(numeric)
	h.Store(&first)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*h.Load()).ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	id := addConnection(t, base, "weather", srv.URL, "none", `{}`)
	a := mcppool.New(mcppool.Options{DB: db, SweepEvery: -1})
	t.Cleanup(a.Close)
	b := mcppool.New(mcppool.Options{DB: base, SweepEvery: -1})
	t.Cleanup(b.Close)
	synced := hearing(t, base, a)
	if _, err := b.Sync(ctx, id); err != nil {
		t.Fatal(err)
	}
	synced()
	call := func() string {
		t.Helper()
		out, err := a.Call(ctx, id, "now", nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if out := call(); !strings.Contains(out, "does not match its output schema") {
		t.Fatalf("a string temperature passed the numeric schema: %q", out)
	}
	before := queries.n.Load()
	if out := call(); !strings.Contains(out, "does not match its output schema") {
		t.Fatalf("second call: %q", out)
	}
	if n := queries.n.Load() - before; n != 0 {
		t.Fatalf("a checked structured result sent %d queries", n)
	}

	second := peer(text)
	h.Store(&second)
	if _, err := b.Sync(ctx, id); err != nil {
		t.Fatal(err)
	}
	synced()
	if out := call(); strings.Contains(out, "ERROR") || !strings.Contains(out, "warm") {
		t.Fatalf("the new listing's schema was not used: %q", out)
	}
}
