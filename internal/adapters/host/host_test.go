package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/testdb"
)

// quoteAdapter is a small adapter over a REST service that wants its key in
// X-Quote-Key: /ping checks it, /quote?symbol= answers a price.
type quoteAdapter struct{}

func (quoteAdapter) Name() string { return "test_quotes" }

func (quoteAdapter) Check(ctx context.Context, c adapters.Conn) (string, error) {
	var out struct{ Plan string }
	err := c.GetJSON(ctx, "/ping", nil, http.Header{"X-Quote-Key": {c.Cred.AccessToken}}, &out)
	var he *adapters.HTTPError
	if errors.As(err, &he) && he.Refused() {
		return "", adapters.ErrRejected
	}
	return "plan " + out.Plan, err
}

func (quoteAdapter) Call(ctx context.Context, c adapters.Conn, tool string, args json.RawMessage) (string, error) {
	var in struct{ Symbol string }
	if err := json.Unmarshal(args, &in); err != nil {
		return "", err
	}
	var out struct{ Price float64 }
	if err := c.GetJSON(ctx, "/quote", map[string][]string{"symbol": {in.Symbol}}, http.Header{"X-Quote-Key": {c.Cred.AccessToken}}, &out); err != nil {
		return "", err
	}
	t := adapters.NewTable("symbol", "price")
	t.Add(in.Symbol, out.Price)
	return t.String(), nil
}

func init() { adapters.Register(quoteAdapter{}) }

func quoteService(t *testing.T, key string, revoked *atomic.Bool) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if revoked.Load() {
			http.Error(w, "revoked", http.StatusForbidden)
			return
		}
		if r.Header.Get("X-Quote-Key") != key {
			http.Error(w, `{"error":"invalid key"}`, http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/ping":
			_, _ = w.Write([]byte(`{"plan":"pro"}`))
		case "/quote":
			_, _ = w.Write([]byte(`{"price":101.5}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// An adapter login is checked by the service itself, gets the catalog's
// curated tools, and its calls go to the adapter with the stored key; no MCP
// session is opened.
func TestAdapterConnectAndCall(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	var revoked atomic.Bool
	svc := quoteService(t, "qk-good-123", &revoked)
	id := adapterRow(t, db, "quotes", svc.URL, "token", `{"adapter":"test_quotes"}`, connstore.StatusPending)
	if _, err := db.Exec(ctx, `INSERT INTO mcp_catalog_tools (server_id, name, description, input_schema, position)
		SELECT id, 'quote', 'A price', '{"type":"object","properties":{"symbol":{"type":"string"}},"required":["symbol"]}', 0
		FROM mcp_servers WHERE slug = 'quotes'`); err != nil {
		t.Fatal(err)
	}
	eng := newEngine(t, db, "quotes")
	pool := host.New(host.Options{DB: db, Credentials: eng.Resolver()})

	if _, err := connectKey(ctx, db, eng, pool, id, "qk-bad-123"); !errors.Is(err, connections.ErrKeyRejected) {
		t.Fatalf("bad key: %v", err)
	}
	if n := scalar(t, db, `SELECT count(*)::text FROM connection_credentials`); n != "0" {
		t.Fatalf("a rejected key was stored (%s rows)", n)
	}
	r, err := connectKey(ctx, db, eng, pool, id, "qk-good-123")
	if err != nil || len(r.Listed) != 1 || r.Listed[0].Name != "quote" {
		t.Fatalf("connect: %v %+v", err, r.Listed)
	}
	if c := connectionstest.Get(t, db, id); string(c.Status)+" "+c.AccountHint != "connected plan pro" {
		got := string(c.Status) + " " + c.AccountHint
		t.Fatalf("connection after connect: %q", got)
	}
	out, err := pool.Call(ctx, id, "quote", json.RawMessage(`{"symbol":"ETH"}`))
	if err != nil || out != "symbol\tprice\nETH\t101.5\n" {
		t.Fatalf("call: %q %v", out, err)
	}
	if tools, err := pool.List(ctx, id); err != nil || len(tools) != 1 || tools[0].Name != "quote" {
		t.Fatalf("list: %v %+v", err, tools)
	}
	if line, err := pool.Probe(ctx, id); err != nil || line != "quotes accepts the stored key (plan pro)" {
		t.Fatalf("probe: %q %v", line, err)
	}
	// A key revoked at the service: the call says to connect again, without the key.
	revoked.Store(true)
	if _, err := pool.Probe(ctx, id); err == nil || !strings.Contains(err.Error(), "refuses the stored key") {
		t.Fatalf("probe of a revoked key: %v", err)
	}
	_, err = pool.Call(ctx, id, "quote", json.RawMessage(`{"symbol":"ETH"}`))
	if err == nil || !strings.Contains(err.Error(), "connect the login again") || strings.Contains(err.Error(), "qk-good") {
		t.Fatalf("revoked key: %v", err)
	}
}

// A catalog row naming an adapter this binary lacks is a clear error at
// Connect, and nothing is stored.
func TestAdapterNotBuiltIn(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	id := adapterRow(t, db, "nope", "https://api.nope.test", "token", `{"adapter":"nope"}`, connstore.StatusPending)
	eng := newEngine(t, db, "nope")
	_, err := connectKey(ctx, db, eng, host.New(host.Options{DB: db, Credentials: eng.Resolver()}), id, "any-key-0123")
	var nb *adapters.ErrNotBuiltIn
	if !errors.As(err, &nb) || !strings.Contains(err.Error(), "not built into this platform") {
		t.Fatalf("connect: %v", err)
	}
	if n := scalar(t, db, `SELECT count(*)::text FROM connection_credentials`); n != "0" {
		t.Fatalf("%s credentials stored", n)
	}
}

// bearerAdapter sends the login's OAuth access token to /data.
type bearerAdapter struct{}

func (bearerAdapter) Name() string { return "test_bearer" }

func (bearerAdapter) Check(context.Context, adapters.Conn) (string, error) { return "", nil }

func (bearerAdapter) Call(ctx context.Context, c adapters.Conn, _ string, _ json.RawMessage) (string, error) {
	var out struct{ Data string }
	err := c.GetJSON(ctx, "/data", nil, http.Header{"Authorization": {"Bearer " + c.Cred.AccessToken}}, &out)
	return out.Data, err
}

func init() { adapters.Register(bearerAdapter{}) }

// An OAuth adapter login answered 401 gets one silent refresh and one retry,
// as MCP sessions do; a fresh token refused again disconnects the login.
func TestOAuthAdapterRefreshesOnceOn401(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok-fresh" {
			http.Error(w, `{"error":"invalid_token"}`, http.StatusUnauthorized)
			return
		}
		_, _ = w.Write([]byte(`{"data":"inbox"}`))
	}))
	t.Cleanup(svc.Close)
	ok := adapterRow(t, db, "mail_ok", svc.URL, "oauth", `{"adapter":"test_bearer"}`, connstore.StatusConnected)
	dead := adapterRow(t, db, "mail_dead", svc.URL, "oauth", `{"adapter":"test_bearer"}`, connstore.StatusConnected)
	c := &creds{tokens: map[uuid.UUID][]string{
		uuid.MustParse(ok):   {"tok-stale", "tok-fresh"},
		uuid.MustParse(dead): {"tok-stale", "tok-also-refused"},
	}}
	pool := host.New(host.Options{DB: db, Credentials: c})

	if out, err := pool.Call(ctx, ok, "read", nil); err != nil || out != "inbox" {
		t.Fatalf("after one refresh: %q %v", out, err)
	}
	_, err := pool.Call(ctx, dead, "read", nil)
	var rr *connectors.ErrReconnectRequired
	if !errors.As(err, &rr) {
		t.Fatalf("a refused fresh token: %v", err)
	}
	if got := c.rejectedCode(dead); got != "token_rejected" {
		t.Fatalf("login after a refused fresh token: marked %q, want token_rejected", got)
	}
	if c.refreshes != 2 {
		t.Fatalf("%d refreshes, want one per login", c.refreshes)
	}
}

// An adapter error that quotes the key (a service echoing the request) comes
// back from a call and from a probe without it.
func TestAdapterErrorsDoNotCarryTheKey(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	svc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream failed for key "+r.Header.Get("X-Quote-Key"), http.StatusBadGateway)
	}))
	t.Cleanup(svc.Close)
	id := adapterRow(t, db, "echoing", svc.URL, "token", `{"adapter":"test_quotes"}`, connstore.StatusConnected)
	const key = "qk-echoed-secret-42"
	pool := host.New(host.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {key}}}})
	_, err := pool.Call(ctx, id, "quote", json.RawMessage(`{"symbol":"ETH"}`))
	if err == nil || !strings.Contains(err.Error(), "502") || strings.Contains(err.Error(), key) {
		t.Fatalf("call: %v", err)
	}
	_, err = pool.Probe(ctx, id)
	if err == nil || !strings.Contains(err.Error(), "502") || strings.Contains(err.Error(), key) {
		t.Fatalf("probe: %v", err)
	}
}
