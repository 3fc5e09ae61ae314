package api_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/connections/connectionstest"
)

// Platform-scope Connect and changes to a platform login's credential stay
// reserved: the API refuses them with 403 platform_scope_reserved, saying
// where the box's own credentials come from, and writes nothing; the
// instance admin's platform bindings keep working.
func TestPlatformScopeIsReserved(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	var hits atomic.Int64
	srv := keyServer(t, "Authorization", "Bearer eth-box-key")
	counted := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		http.Redirect(w, r, srv+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	addServer(t, me.DB, "etherscan", srv, "token", `{"header":"Authorization","scheme":"Bearer"}`)
	addServer(t, me.DB, "opensea", counted, "token", `{"header":"X-API-KEY"}`)
	existing := me.platformKeyLogin(t, "etherscan", "eth-box-key")

	type state struct{ conns, creds, bindings, tools int }
	now := func() state {
		return state{connectionstest.Count(t, me.DB), me.Count("connection_credentials"), me.Count("bindings"), me.Count("mcp_tools")}
	}
	before := now()
	refused := func(name string, r apitest.Response) {
		t.Helper()
		msg := string(r.Body)
		if r.Status != 403 || r.ErrorCode() != "platform_scope_reserved" || !strings.Contains(msg, "environment") || strings.Contains(msg, "os-key") {
			t.Errorf("%s: %d %s", name, r.Status, msg)
		}
		if got := now(); got != before {
			t.Errorf("%s wrote something: %+v, was %+v", name, got, before)
		}
	}
	for _, who := range []struct{ name, token string }{{"admin", ""}, {"operator", me.Operator(org)}} {
		do := func(method, path string, body any) {
			r := me.Admin(method, path, body)
			if who.token != "" {
				r = me.Do(who.token, method, path, body)
			}
			refused(who.name+" "+method+" "+path, r)
		}
		do("POST", "/api/mcp/connect", map[string]any{"slug": "opensea", "owner_scope": "platform", "key": "os-key"})
		do("POST", "/api/mcp/connections", map[string]any{"slug": "opensea", "owner_scope": "platform"})
		// A new key for the existing platform login is a Connect at its scope.
		do("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "platform", "key": "os-key"})
		do("DELETE", "/api/mcp/connections/"+existing, nil)
	}
	if hits.Load() != 0 {
		t.Errorf("a refused platform Connect reached the server %d times", hits.Load())
	}

	// The platform login still works, and the admin's platform bindings too.
	if r := me.Admin("POST", "/api/mcp/connections/"+existing+"/call", `{"tool":"echo","arguments":{"text":"still"}}`); r.Status != 200 || !strings.Contains(string(r.Body), "echo: still") {
		t.Fatalf("the platform login after the refusals: %d %s", r.Status, r.Body)
	}
	if r := me.Admin("PUT", "/api/bindings", map[string]any{"scope": "platform", "catalog_kind": "mcp_tool", "catalog_id": "etherscan_echo", "enabled": false}); r.Status != 200 {
		t.Fatalf("platform binding: %d %s", r.Status, r.Body)
	}
	// Organisation logins connect as before.
	if r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": "eth-box-key"}); r.Status != 200 {
		t.Fatalf("organisation login: %d %s", r.Status, r.Body)
	}
}
