package api_test

import (
	"context"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
	"github.com/guilds/guilds/workflows/connect"
)

// oauthFixture: an authorization server and a protected MCP server, with the
// catalog's notion row pointing at it.
func oauthFixture(t *testing.T, me *mcpEnv) *oauthtest.Server {
	as := oauthtest.New(t)
	as.EmailDomain = "acme.test"
	rs := as.Protect(t, "/mcp", server.NewStreamableHTTPServer(echoServer(), server.WithStateful(true)), nil)
	addServer(t, me.DB, "notion", rs.URL+"/mcp", "oauth", `{"provider":"oauth2","dynamic_registration":true}`)
	return as
}

func (me *mcpEnv) connectOAuth(t *testing.T, scope, owner string) (connID, authURL string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"slug": "notion", "owner_scope": scope, "owner_id": owner})
	r := me.doIn(t, me.browser, me.AdminToken, "POST", "/api/mcp/connect", string(body))
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	m := r.Map()
	return m["connection"].(map[string]any)["id"].(string), m["authorization_url"].(string)
}

func (me *mcpEnv) status(t *testing.T, id string) string {
	return connectionstest.StatusOr(t, me.DB, id, "absent")
}

func (me *mcpEnv) call(t *testing.T, id, tool, args string) (int, map[string]any) {
	r := me.Admin("POST", "/api/mcp/connections/"+id+"/call", `{"tool":"`+tool+`","arguments":`+args+`}`)
	return r.Status, r.Map()
}

func TestOAuthConnectListCallRefreshReconnect(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	as := oauthFixture(t, me)
	org, _, _ := me.Hierarchy()

	id, authURL := me.connectOAuth(t, "organisation", org)
	q := mustQuery(t, authURL)
	if q.Get("code_challenge_method") != "S256" || q.Get("state") == "" || !strings.HasSuffix(q.Get("resource"), "/mcp") ||
		!strings.HasSuffix(q.Get("redirect_uri"), api.CallbackPath) {
		t.Fatalf("authorization URL %s", authURL)
	}
	if me.status(t, id) != "pending" || as.Count("register") != 1 {
		t.Fatalf("pending=%s registrations=%d", me.status(t, id), as.Count("register"))
	}
	loc := follow(t, authURL)
	r := me.callback(t, loc)
	if r.Status != 200 {
		t.Fatalf("callback: %d %s", r.Status, r.Body)
	}
	if m := r.Map(); m["status"] != "connected" || m["account_hint"] != "acme.test" || m["tools"] != float64(2) {
		t.Fatalf("callback reply %v", m)
	}
	// The state is single use: a repeat answers the login's outcome without
	// a second exchange (oauth_repeat_test.go).
	if r := me.callback(t, loc); r.Status != 200 || as.Count("code") != 1 {
		t.Fatalf("replayed callback: %d %s, %d code exchanges", r.Status, r.Body, as.Count("code"))
	}
	if n := me.Count("bindings"); n < 1 {
		t.Fatalf("no binding written")
	}
	tl := me.Admin("GET", "/api/mcp/connections/"+id+"/tools", nil)
	if tl.Status != 200 || !strings.Contains(string(tl.Body), `"notion_pages_search"`) {
		t.Fatalf("tools: %d %s", tl.Status, tl.Body)
	}

	// A test call; the login's own token is redacted from the result.
	cred, err := me.Engine.Resolver().Token(context.Background(), uuid.MustParse(id))
	if err != nil {
		t.Fatal(err)
	}
	st, m := me.call(t, id, "echo", `{"text":"token is `+cred.AccessToken+`"}`)
	if st != 200 || strings.Contains(m["result"].(string), cred.AccessToken) || !strings.HasPrefix(m["result"].(string), "echo: token is ") {
		t.Fatalf("call: %d %v", st, m)
	}

	// The server stops accepting the token: one silent refresh (rotated), one retry.
	as.ExpireAccess()
	st, m = me.call(t, id, "notion_echo", `{"text":"again"}`)
	if st != 200 || m["result"] != "echo: again" || as.Count("refresh") != 1 {
		t.Fatalf("after expiry: %d %v refreshes=%d", st, m, as.Count("refresh"))
	}

	// The grant is revoked: invalid_grant → reconnect required, no loop.
	as.RevokeGrants()
	st, m = me.call(t, id, "echo", `{"text":"x"}`)
	if st != 409 || me.status(t, id) != "disconnected" {
		t.Fatalf("after revoke: %d %v status=%s", st, m, me.status(t, id))
	}
	refreshes := as.Count("refresh")
	if st, _ := me.call(t, id, "echo", `{"text":"x"}`); st != 409 || as.Count("refresh") != refreshes {
		t.Fatalf("a disconnected login must not refresh again")
	}

	// A denied retry over the disconnected login leaves it disconnected with its binding.
	as.Deny = true
	_, authURL = me.connectOAuth(t, "organisation", org)
	denied := follow(t, authURL)
	if r := me.callback(t, denied); r.Status != 422 || r.ErrorCode() != "oauth_denied" {
		t.Fatalf("denied: %d %s", r.Status, r.Body)
	}
	// Its repeat hears the same refusal: the login it names still exists.
	if r := me.callback(t, denied); r.Status != 422 || r.ErrorCode() != "oauth_denied" {
		t.Fatalf("denied, repeated: %d %s", r.Status, r.Body)
	}
	if me.status(t, id) != "disconnected" || me.Count("bindings") < 1 {
		t.Fatalf("denied retry changed the login: %s", me.status(t, id))
	}

	// Reconnect.
	as.Deny = false
	id2, authURL := me.connectOAuth(t, "organisation", org)
	if id2 != id {
		t.Fatalf("reconnect made a new login %s", id2)
	}
	if r := me.callback(t, follow(t, authURL)); r.Status != 200 {
		t.Fatalf("reconnect: %d %s", r.Status, r.Body)
	}
	if st, m := me.call(t, id, "echo", `{"text":"back"}`); st != 200 || m["result"] != "echo: back" {
		t.Fatalf("after reconnect: %d %v", st, m)
	}
	if as.Count("register") != 1 {
		t.Fatalf("the client must be registered once per redirect URI, got %d", as.Count("register"))
	}
	// Connected: connect again is a conflict.
	if r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "notion", "owner_scope": "organisation", "owner_id": org}); r.Status != 409 {
		t.Fatalf("connect over a connected login: %d", r.Status)
	}
}

func TestOAuthDeniedDeletesNewLogin(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	as := oauthFixture(t, me)
	as.Deny = true
	_, guild, _ := me.Hierarchy()
	id, authURL := me.connectOAuth(t, "guild", guild)
	if r := me.callback(t, follow(t, authURL)); r.Status != 422 {
		t.Fatalf("denied: %d %s", r.Status, r.Body)
	}
	if me.status(t, id) != "absent" || me.Count("connection_oauth_pending") != 0 {
		t.Fatalf("a denied new login must be deleted (status %s)", me.status(t, id))
	}
}

func TestOAuthNoCallbackBeforeDeadline(t *testing.T) {
	me := newMCPEnv(t, true, func(d *api.MCPDeps) { d.OAuthDeadline = 2 * time.Second })
	oauthFixture(t, me)
	_, _, agent := me.Hierarchy()
	id, _ := me.connectOAuth(t, "agent", agent)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := connect.Wait(ctx, me.Temporal, id)
	if err != nil || res.Status != connect.StatusExpired {
		t.Fatalf("result %+v %v", res, err)
	}
	if me.status(t, id) != "absent" {
		t.Fatal("an expired new login must be deleted")
	}
}

func TestOAuthSurvivesWorkerRestart(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	as := oauthFixture(t, me)
	org, _, _ := me.Hierarchy()
	id, authURL := me.connectOAuth(t, "organisation", org)
	me.stopWorker() // the worker dies while the login waits for its callback
	loc := follow(t, authURL)
	me.startWorker(t)
	r := me.callback(t, loc)
	if r.Status != 200 || me.status(t, id) != "connected" || as.Count("code") != 1 {
		t.Fatalf("after worker restart: %d %s", r.Status, r.Body)
	}
}

func TestOAuthCallbackUnknownState(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	if r := me.Do("", "GET", api.CallbackPath+"?state=nope&code=x", nil); r.Status != 400 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
}

func mustQuery(t *testing.T, raw string) url.Values {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// The account hint comes from the token response's email_domain (Notion),
// userinfo only standing in when the token response has none; the hint is a
// display value, so it never joins the login's redaction set.
func TestOAuthAccountHint(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	as := oauthFixture(t, me)
	org, guild, agent := me.Hierarchy()

	// Token response only (Notion publishes no userinfo endpoint).
	as.NoUserinfo = true
	id, authURL := me.connectOAuth(t, "organisation", org)
	if r := me.callback(t, follow(t, authURL)); r.Status != 200 || r.Map()["account_hint"] != "acme.test" {
		t.Fatalf("token-response hint: %d %s", r.Status, r.Body)
	}
	secrets, err := me.Engine.RunSecrets(context.Background(), agent)
	if err != nil {
		t.Fatal(err)
	}
	cred, err := me.Engine.Resolver().Token(context.Background(), uuid.MustParse(id))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(secrets, cred.AccessToken) || slices.Contains(secrets, "acme.test") || len(cred.Extra) != 0 {
		t.Fatalf("redaction set holds the display hint, or misses the token (%d values, extra %d)", len(secrets), len(cred.Extra))
	}
	if st, m := me.call(t, id, "echo", `{"text":"mail at acme.test"}`); st != 200 || m["result"] != "echo: mail at acme.test" {
		t.Fatalf("the hint was redacted from a result: %d %v", st, m)
	}

	// The token response wins over userinfo, which is then not asked.
	as.NoUserinfo = false
	as.UserinfoDomain = "other.test"
	_, authURL = me.connectOAuth(t, "guild", guild)
	if r := me.callback(t, follow(t, authURL)); r.Status != 200 || r.Map()["account_hint"] != "acme.test" || as.Count("userinfo") != 0 {
		t.Fatalf("token response over userinfo: %d %s (userinfo asked %d times)", r.Status, r.Body, as.Count("userinfo"))
	}

	// No email_domain in the token response: userinfo fills the hint.
	as.EmailDomain = ""
	_, authURL = me.connectOAuth(t, "agent", agent)
	if r := me.callback(t, follow(t, authURL)); r.Status != 200 || r.Map()["account_hint"] != "other.test" {
		t.Fatalf("userinfo hint: %d %s", r.Status, r.Body)
	}
}
