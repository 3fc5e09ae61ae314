// Package apitest runs the real API on a fresh database for HTTP-level tests.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/testdb"
)

// Env is a running API with an instance-admin token.
type Env struct {
	T          testing.TB
	DB         *pgxpool.Pool
	Server     *api.Server
	HTTP       *httptest.Server
	AdminToken string
}

// Options adjust the environment; the zero value is fine.
type Options struct {
	Env   map[string]string // integration variables seen by the registry
	Tweak func(*api.Deps)   // last chance to change dependencies
}

// New starts the API on a fresh migrated database.
func New(t testing.TB, o Options) *Env {
	t.Helper()
	db := testdb.New(t)
	ctx := context.Background()
	u, err := access.CreateUser(ctx, db, "admin", "", true)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := access.MintToken(ctx, db, u.ID, "test")
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	t.Cleanup(func() { _ = rdb.Close() })
	d := api.Deps{
		DB: db, Redis: rdb, AuthMode: "token", Log: slog.New(slog.DiscardHandler),
		Integrations: integrations.New(func(k string) string { return o.Env[k] }),
	}
	if o.Tweak != nil {
		o.Tweak(&d)
	}
	srv := api.New(d)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return &Env{T: t, DB: db, Server: srv, HTTP: hs, AdminToken: tok}
}

// Response is a decoded reply.
type Response struct {
	Status int
	Body   []byte
	Header http.Header
}

// JSON decodes the body into v, failing the test when it is not JSON.
func (r Response) JSON(v any) {
	if err := json.Unmarshal(r.Body, v); err != nil {
		panic("apitest: body is not JSON: " + string(r.Body))
	}
}

// Map decodes the body as a JSON object.
func (r Response) Map() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(r.Body, &m)
	return m
}

// ErrorCode is the error.code of an error body, or "".
func (r Response) ErrorCode() string {
	m := r.Map()
	e, _ := m["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

// Do sends a request with a token; body may be nil, a string (sent raw) or a value (sent as JSON).
func (e *Env) Do(token, method, path string, body any) Response {
	e.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.T.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.HTTP.URL+path, rd)
	if err != nil {
		e.T.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.T.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Body: raw, Header: resp.Header}
}

// Admin sends a request as the instance admin.
func (e *Env) Admin(method, path string, body any) Response {
	e.T.Helper()
	return e.Do(e.AdminToken, method, path, body)
}

// Operator creates a user who operates the given organisation and returns its token.
func (e *Env) Operator(orgID string) string {
	e.T.Helper()
	ctx := context.Background()
	u, err := access.CreateUser(ctx, e.DB, "operator", "", false)
	if err != nil {
		e.T.Fatal(err)
	}
	if orgID != "" {
		if err := access.AddMember(ctx, e.DB, u.ID, orgID, access.RoleOperator); err != nil {
			e.T.Fatal(err)
		}
	}
	tok, err := access.MintToken(ctx, e.DB, u.ID, "test")
	if err != nil {
		e.T.Fatal(err)
	}
	return tok
}

// Count returns the number of rows of a table, to check that a refused request wrote nothing.
func (e *Env) Count(table string) int {
	e.T.Helper()
	var n int
	if err := e.DB.QueryRow(context.Background(), "SELECT count(*) FROM "+table).Scan(&n); err != nil {
		e.T.Fatal(err)
	}
	return n
}

// Hierarchy creates an organisation, a guild and an agent and returns their ids.
func (e *Env) Hierarchy() (orgID, guildID, agentID string) {
	e.T.Helper()
	var o, g, a map[string]any
	r := e.Admin("POST", "/api/orgs", map[string]any{"name": "Org " + e.T.Name()})
	if r.Status != 201 {
		e.T.Fatalf("create org: %d %s", r.Status, r.Body)
	}
	r.JSON(&o)
	r = e.Admin("POST", "/api/orgs/"+o["id"].(string)+"/guilds", map[string]any{"name": "Guild"})
	if r.Status != 201 {
		e.T.Fatalf("create guild: %d %s", r.Status, r.Body)
	}
	r.JSON(&g)
	r = e.Admin("POST", "/api/guilds/"+g["id"].(string)+"/agents", map[string]any{"name": "Agent"})
	if r.Status != 201 {
		e.T.Fatalf("create agent: %d %s", r.Status, r.Body)
	}
	r.JSON(&a)
	return o["id"].(string), g["id"].(string), a["id"].(string)
}
