package mcppool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

func TestCallListAndNames(t *testing.T) {
	eachEra(t, func(t *testing.T, newRemote func(testing.TB, string) *remote) {
		ctx := context.Background()
		db := testdb.New(t)
		rs := newRemote(t, "Authorization")
		rs.allow("Bearer tok-1")
		id := addConnection(t, db, "notion", rs.URL, "oauth", `{}`)
		cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {"tok-1"}}}
		p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
		t.Cleanup(p.Close)

		tools, err := p.Sync(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]string{}
		for _, tl := range tools {
			names[tl.Name] = tl.RemoteName
		}
		if names["notion_pages_search"] != "pages.search" || names["notion_echo"] != "echo" {
			t.Fatalf("names %v", names)
		}
		stored, err := mcppool.Stored(ctx, db, id)
		if err != nil || len(stored) != 3 {
			t.Fatalf("stored %v %v", stored, err)
		}
		out, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"hi"}`))
		if err != nil || out != "echo: hi" {
			t.Fatalf("call = %q, %v", out, err)
		}
		out, err = p.Call(ctx, id, "fail", nil)
		if err != nil || out != "ERROR: quota exceeded" {
			t.Fatalf("erroring tool = %q, %v", out, err)
		}
	})
}

func TestTokenServerHeader(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rs := newRemote(t, "X-API-KEY")
	rs.allow("key-1")
	id := addConnection(t, db, "opensea", rs.URL, "token", `{"header":"X-API-KEY"}`)
	cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {"key-1"}}}
	p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
	t.Cleanup(p.Close)
	if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	rs.revoke("key-1")
	_, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`))
	if err == nil || contains(err.Error(), "key-1") || cr.refreshes != 0 {
		t.Fatalf("a rejected key: err=%v refreshes=%d", err, cr.refreshes)
	}
	// The revoked key is reported to the engine (which leaves the login
	// disconnected, so Connect can take a new key), and later calls fail
	// without reaching the server.
	if code := cr.rejectedCode(id); !errors.Is(err, &connectors.ErrReconnectRequired{}) || code != "token_rejected" {
		t.Fatalf("a rejected key: err=%v marked=%q", err, code)
	}
	seen := rs.seen.Load()
	if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); !errors.Is(err, &connectors.ErrReconnectRequired{}) || rs.seen.Load() != seen {
		t.Fatalf("second call: %v", err)
	}
}

func TestTransientKeyRejectionIsRetried(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rs := newRemote(t, "X-API-KEY")
	rs.allow("key-1")
	id := addConnection(t, db, "opensea", rs.URL, "token", `{"header":"X-API-KEY"}`)
	cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {"key-1"}}}
	p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
	t.Cleanup(p.Close)
	if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
		t.Fatal(err)
	}
	rs.rejectNext(1) // one 401, then the key works again
	out, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"y"}`))
	status := connectionstest.StatusOr(t, db, id, "absent")
	if err != nil || out != "echo: y" || status != "connected" {
		t.Fatalf("after one 401: %q %v status=%s", out, err, status)
	}
}

func TestUnauthorizedRefreshesOnceThenRetries(t *testing.T) {
	eachEra(t, func(t *testing.T, newRemote func(testing.TB, string) *remote) {
		ctx := context.Background()
		db := testdb.New(t)
		rs := newRemote(t, "Authorization")
		rs.allow("Bearer old")
		id := addConnection(t, db, "notion", rs.URL, "oauth", `{}`)
		cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {"old", "new"}}}
		p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
		t.Cleanup(p.Close)
		if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"1"}`)); err != nil {
			t.Fatal(err)
		}
		rs.revoke("Bearer old")
		rs.allow("Bearer new")
		out, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"2"}`))
		if err != nil || out != "echo: 2" || cr.refreshes != 1 {
			t.Fatalf("after 401: %q %v refreshes=%d", out, err, cr.refreshes)
		}
	})
}

func TestRejectedFreshTokenMarksReconnectRequired(t *testing.T) {
	eachEra(t, func(t *testing.T, newRemote func(testing.TB, string) *remote) {
		ctx := context.Background()
		db := testdb.New(t)
		rs := newRemote(t, "Authorization")
		rs.allow("Bearer a")
		id := addConnection(t, db, "notion", rs.URL, "oauth", `{}`)
		cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {"a", "b"}}}
		p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
		t.Cleanup(p.Close)
		if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"1"}`)); err != nil {
			t.Fatal(err)
		}
		rs.revoke("Bearer a")
		_, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"2"}`))
		if !errors.Is(err, &connectors.ErrReconnectRequired{}) || cr.refreshes != 1 {
			t.Fatalf("err=%v refreshes=%d", err, cr.refreshes)
		}
		if code := cr.rejectedCode(id); code != "token_rejected" {
			t.Fatalf("the login was marked %q, want token_rejected", code)
		}
		// No loop: the next call fails at once without refreshing again.
		if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"3"}`)); !errors.Is(err, &connectors.ErrReconnectRequired{}) || cr.refreshes != 1 {
			t.Fatalf("second call err=%v refreshes=%d", err, cr.refreshes)
		}
	})
}

func TestLostSessionIsReinitialised(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rs := newRemote(t, "Authorization")
	rs.allow("Bearer a")
	id := addConnection(t, db, "notion", rs.URL, "oauth", `{}`)
	cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {"a"}}}
	p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
	t.Cleanup(p.Close)
	if _, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"1"}`)); err != nil {
		t.Fatal(err)
	}
	rs.restart() // the server forgot every session
	out, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"2"}`))
	if err != nil || out != "echo: 2" {
		t.Fatalf("after restart: %q %v", out, err)
	}
}

func TestConnectionsDoNotShareSessions(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rs := newRemote(t, "Authorization")
	rs.allow("Bearer a")
	rs.allow("Bearer b")
	a := addConnection(t, db, "notion", rs.URL, "oauth", `{}`)
	b := addConnection(t, db, "notion", rs.URL, "oauth", `{}`)
	cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(a): {"a"}, uuid.MustParse(b): {"b"}}}
	p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
	t.Cleanup(p.Close)
	for _, c := range []struct{ id, want string }{{a, "Bearer a"}, {b, "Bearer b"}, {a, "Bearer a"}} {
		if _, err := p.Call(ctx, c.id, "echo", json.RawMessage(`{"text":"x"}`)); err != nil {
			t.Fatal(err)
		}
		if got := *rs.lastVal.Load(); got != c.want {
			t.Fatalf("connection %s sent %q", c.id, got)
		}
	}
}

func TestRefreshUsesStoredListUntilStale(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rs := newRemote(t, "Authorization")
	rs.allow("Bearer a")
	id := addConnection(t, db, "notion", rs.URL, "oauth", `{}`)
	cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {"a"}}}
	p := mcppool.New(mcppool.Options{DB: db, Credentials: cr})
	t.Cleanup(p.Close)
	if err := p.Refresh(ctx, id, mcppool.ListMaxAge); err != nil {
		t.Fatal(err)
	}
	n := rs.seen.Load()
	if err := p.Refresh(ctx, id, mcppool.ListMaxAge); err != nil || rs.seen.Load() != n {
		t.Fatalf("a fresh stored list must not list remotely (%v, %d→%d)", err, n, rs.seen.Load())
	}
	if _, err := db.Exec(ctx, `UPDATE mcp_tools SET listed_at = now() - interval '11 minutes' WHERE connection_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	rs.revoke("Bearer a") // the listing now fails: the stored list stays
	if err := p.Refresh(ctx, id, mcppool.ListMaxAge); err == nil {
		t.Fatal("a failed listing must be reported")
	}
	if stored, _ := mcppool.Stored(ctx, db, id); len(stored) != 3 {
		t.Fatalf("stored list lost: %v", stored)
	}
	_ = time.Second
}

// A server that quotes the request's key in its error body: the key reaches
// neither the returned error nor the pool's log.
func TestErrorsDoNotCarryTheKey(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	rs := newRemote(t, "X-API-KEY")
	rs.allow("sk-quoted-key")
	id := addConnection(t, db, "etherscan", rs.URL, "token", `{"header":"X-API-KEY"}`)
	cr := &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {"sk-quoted-key"}}}
	var logs bytes.Buffer
	var mu sync.Mutex
	log := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(b)
	}), nil))
	p := mcppool.New(mcppool.Options{DB: db, Credentials: cr, Log: log})
	t.Cleanup(p.Close)
	if _, err := p.Sync(ctx, id); err != nil {
		t.Fatal(err)
	}
	rs.echoErr.Store(true)
	_, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"x"}`))
	if err == nil || contains(err.Error(), "sk-quoted-key") || !contains(err.Error(), "[REDACTED]") {
		t.Fatalf("call error: %v", err)
	}
	if _, err := db.Exec(ctx, `UPDATE mcp_tools SET listed_at = now() - interval '11 minutes' WHERE connection_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if err := p.Refresh(ctx, id, mcppool.ListMaxAge); err == nil || contains(err.Error(), "sk-quoted-key") {
		t.Fatalf("refresh error: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if contains(logs.String(), "sk-quoted-key") || !contains(logs.String(), "listing failed") {
		t.Fatalf("log: %s", logs.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// The pool serves MCP servers only: a call or a listing of a local
// adapter's login is refused with no session opened (internal/adapters/host
// serves those).
func TestPoolRefusesAdapterLogins(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	id := addConnection(t, db, "quotes", "http://127.0.0.1:9", "token", `{"adapter":"test_quotes"}`)
	if _, err := db.Exec(ctx, `UPDATE mcp_servers SET kind = 'adapter' WHERE slug = 'quotes'`); err != nil {
		t.Fatal(err)
	}
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {"qk-0123"}}}})
	t.Cleanup(pool.Close)
	var notMCP *mcppool.NotMCPError
	if _, err := pool.Call(ctx, id, "quote", json.RawMessage(`{}`)); !errors.As(err, &notMCP) || notMCP.Server != "quotes" {
		t.Fatalf("call: %v", err)
	}
	if _, err := pool.List(ctx, id); !errors.As(err, &notMCP) {
		t.Fatalf("list: %v", err)
	}
}
