package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connstore"
)

// Deleting an organisation, a guild, an agent or a catalog server removes
// the logins under it; once the delete has committed, each of them is
// forgotten: the session the pool held is closed, the resolver refuses the
// credential, and no request reaches the server again.
func TestCascadingDeletesForgetTheirLogins(t *testing.T) {
	for _, c := range []struct {
		name  string
		owner string // organisation, guild or agent: where the login is
		path  func(org, guild, agent string) string
	}{
		{"organisation", "organisation", func(o, _, _ string) string { return "/api/orgs/" + o }},
		{"organisation of a guild's login", "guild", func(o, _, _ string) string { return "/api/orgs/" + o }},
		{"organisation of an agent's login", "agent", func(o, _, _ string) string { return "/api/orgs/" + o }},
		{"guild", "guild", func(_, g, _ string) string { return "/api/guilds/" + g }},
		{"guild of an agent's login", "agent", func(_, g, _ string) string { return "/api/guilds/" + g }},
		{"agent", "agent", func(_, _, a string) string { return "/api/agents/" + a }},
		{"catalog server", "organisation", func(_, _, _ string) string { return "/api/admin/mcp/servers/etherscan" }},
		{"login", "guild", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			me := newMCPEnv(t, false, nil)
			org, guild, agent := me.Hierarchy()
			var hits atomic.Int64
			h := server.NewStreamableHTTPServer(echoServer(), server.WithStateful(true))
			addServer(t, me.DB, "etherscan", newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				if r.Header.Get("Authorization") != "Bearer eth-org-key" {
					http.Error(w, "unauthorized", http.StatusUnauthorized)
					return
				}
				h.ServeHTTP(w, r)
			})), "token", `{"header":"Authorization","scheme":"Bearer"}`)
			owner := map[string]string{"organisation": org, "guild": guild, "agent": agent}[c.owner]
			r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": c.owner, "owner_id": owner, "key": "eth-org-key"})
			if r.Status != 200 {
				t.Fatalf("connect: %d %s", r.Status, r.Body)
			}
			id := r.Map()["connection"].(map[string]any)["id"].(string)
			// The Test call leaves the pool holding the login's session.
			if st, res := me.call(t, id, "echo", `{"text":"before"}`); st != 200 || !strings.Contains(res["result"].(string), "echo: before") {
				t.Fatalf("test call: %d %v", st, res)
			}
			path := "/api/mcp/connections/" + id
			if c.path != nil {
				path = c.path(org, guild, agent)
			}
			announced := listenLogins(t, me.DB)
			if r := me.Admin("DELETE", path, nil); r.Status != 204 {
				t.Fatalf("delete %s: %d %s", path, r.Status, r.Body)
			}
			// Other processes' pools hear of it on the login channel.
			announced(id)
			if connectionstest.Count(t, me.DB) != 0 || me.Count("connection_credentials") != 0 {
				t.Fatal("the delete left the login behind")
			}
			before := hits.Load()
			ctx := context.Background()
			if st, res := me.call(t, id, "echo", `{"text":"after"}`); st != 404 {
				t.Errorf("test call after the delete: %d %v", st, res)
			}
			if out, err := me.Pool.Call(ctx, id, "echo", json.RawMessage(`{"text":"after"}`)); err == nil || strings.Contains(out, "echo: after") {
				t.Errorf("the pool still calls the deleted login: %q %v", out, err)
			}
			if cred, err := me.Engine.Resolver().Token(ctx, uuid.MustParse(id)); err == nil {
				t.Errorf("the resolver still serves the deleted login's credential (%d chars)", len(cred.AccessToken))
			}
			if n := hits.Load() - before; n != 0 {
				t.Errorf("%d requests reached the server after the delete", n)
			}
		})
	}
}

// listenLogins listens on the login channel from a connection of its own and
// returns a function that waits (within a wide bound) for id to be announced.
func listenLogins(t *testing.T, db *pgxpool.Pool) func(id string) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.ConnectConfig(ctx, db.Config().ConnConfig.Copy())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	if _, err := conn.Exec(ctx, "LISTEN "+connstore.Channel); err != nil {
		t.Fatal(err)
	}
	return func(id string) {
		t.Helper()
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		for {
			n, err := conn.WaitForNotification(wctx)
			if err != nil {
				t.Fatalf("the login %s was not announced: %v", id, err)
			}
			if n.Payload == id {
				return
			}
		}
	}
}
