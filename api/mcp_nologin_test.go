package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/mcpoauth"
)

// toolsOf answers the server's card in a Tools view: its login status and
// the names of its tools.
func toolsOf(t *testing.T, r apitest.Response, slug string) (login string, tools []string) {
	t.Helper()
	var v struct {
		Servers []struct {
			Slug  string
			Login *struct{ Status string }
			Tools []struct {
				Name    string
				Listed  bool
				Enabled bool
			}
		}
	}
	if r.Status != 200 {
		t.Fatalf("tools view: %d %s", r.Status, r.Body)
	}
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatal(err)
	}
	for _, s := range v.Servers {
		if s.Slug != slug {
			continue
		}
		if s.Login != nil {
			login = s.Login.Status
		}
		for _, tl := range s.Tools {
			if tl.Listed && tl.Enabled {
				tools = append(tools, tl.Name)
			}
		}
	}
	return login, tools
}

// offeredNames lists the names of the tools a run of the agent is offered and the
// offer's warnings.
func offeredNames(t *testing.T, me *mcpEnv, token, agent string) (names []string, warnings string) {
	t.Helper()
	r := me.Do(token, "GET", "/api/agents/"+agent+"/offered-tools", nil)
	var o struct {
		Tools    []struct{ Name string }
		Warnings []string
	}
	if r.Status != 200 {
		t.Fatalf("offered tools: %d %s", r.Status, r.Body)
	}
	r.JSON(&o)
	for _, tl := range o.Tools {
		names = append(names, tl.Name)
	}
	return names, strings.Join(o.Warnings, "; ")
}

func has(list []string, name string) bool {
	for _, n := range list {
		if n == name {
			return true
		}
	}
	return false
}

// A catalog row that needs no login (auth none, no fields) is usable as soon
// as an operator turns it on at a scope: the turn-on lists its tools, the
// Tools view shows them (Refresh lists again), the agents below are offered
// them and the Test calls one; Off takes them away again. Connect at another
// scope is the same action, not a dead end.
func TestNoLoginServerIsUsableOnceTurnedOn(t *testing.T) {
	me := newMCPEnvDeps(t, false, nil, nil, func(d *api.Deps) { d.URLPolicy = mcpoauth.Policy{AllowLoopback: true} })
	mcpSrv := echoServer()
	url := newHTTPServer(t, server.NewStreamableHTTPServer(mcpSrv))
	org, guild, agent := me.Hierarchy()
	op := me.Operator(org)

	if r := me.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "open", "name": "Open", "transport": "http",
		"auth": "none", "url": url + "/mcp", "published": true}); r.Status != 201 {
		t.Fatalf("add the server: %d %s", r.Status, r.Body)
	}
	on := func(scope, id string, enabled bool) apitest.Response {
		return me.Do(op, "PUT", "/api/bindings", map[string]any{"scope": scope, "scope_id": id,
			"catalog_kind": "mcp", "catalog_id": "open", "enabled": enabled})
	}
	r := on("organisation", org, true)
	if r.Status != 200 || r.Map()["connection_id"] == nil {
		t.Fatalf("turn on: %d %s", r.Status, r.Body)
	}
	connID := r.Map()["connection_id"].(string)

	login, tools := toolsOf(t, me.Do(op, "GET", "/api/orgs/"+org+"/tools", nil), "open")
	if login != "connected" || !has(tools, "open_echo") || !has(tools, "open_pages_search") {
		t.Fatalf("tools view after On: login %q tools %v", login, tools)
	}
	names, warnings := offeredNames(t, me, op, agent)
	if !has(names, "open_echo") || strings.Contains(warnings, "no login") {
		t.Fatalf("offer after On: %v (warnings %q)", names, warnings)
	}
	if st, res := me.call(t, connID, "open_echo", `{"text":"hi"}`); st != 200 || res["result"] != "echo: hi" {
		t.Fatalf("test call: %d %v", st, res)
	}

	// Refresh lists again: a tool the server added since shows up.
	mcpSrv.AddTool(mcpTool("added"), okHandler)
	r = me.Do(op, "POST", "/api/mcp/connections/"+connID+"/tools/refresh", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"open_added"`) {
		t.Fatalf("refresh: %d %s", r.Status, r.Body)
	}
	if _, tools := toolsOf(t, me.Do(op, "GET", "/api/orgs/"+org+"/tools", nil), "open"); !has(tools, "open_added") {
		t.Fatalf("tools view after Refresh: %v", tools)
	}

	// Off, then On again: the same login serves, no second one is made.
	if r := on("organisation", org, false); r.Status != 200 {
		t.Fatalf("turn off: %d %s", r.Status, r.Body)
	}
	if names, _ := offeredNames(t, me, op, agent); has(names, "open_echo") {
		t.Fatalf("offer after Off: %v", names)
	}
	if r := on("organisation", org, true); r.Status != 200 || r.Map()["connection_id"] != connID {
		t.Fatalf("turn on again: %d %s", r.Status, r.Body)
	}
	// A guild below is served by the organisation's login: no login of its own.
	if r := on("guild", guild, true); r.Status != 200 || r.Map()["connection_id"] != nil && r.Map()["connection_id"] != connID {
		t.Fatalf("guild on: %d %s", r.Status, r.Body)
	}
	if n := me.Count("mcp_connections"); n != 1 {
		t.Fatalf("%d logins after turning on twice and below, want 1", n)
	}

	// Connect at an agent is the same action: its own login, listed.
	r = me.Do(op, "POST", "/api/mcp/connect", map[string]any{"slug": "open", "owner_scope": "agent", "owner_id": agent})
	if m := r.Map(); r.Status != 200 || m["tools"] != float64(3) || m["connection"].(map[string]any)["status"] != "connected" {
		t.Fatalf("connect a no-login server: %d %s", r.Status, r.Body)
	}
	// Values are not for it.
	r = me.Do(op, "POST", "/api/mcp/connect", map[string]any{"slug": "open", "owner_scope": "guild", "owner_id": guild,
		"values": map[string]string{"workspace": "x"}})
	if p := problemFields(r); r.Status != 422 || p["values"] == "" {
		t.Fatalf("values for a no-login server: %d %s", r.Status, r.Body)
	}
}

// A no-login stdio row whose command does not exist is refused with why when
// it is turned on or connected, and nothing is left behind. A login that
// already exists (the command went away since) says the same on Refresh,
// keeping its stored tools.
func TestNoLoginStdioCommandMissing(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	op := me.Operator(org)
	const missing = "/nonexistent/guilds-test-mcp-server"
	r := me.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "gone", "name": "Gone", "transport": "stdio",
		"auth": "none", "published": true, "config": map[string]any{"command": missing, "args": []string{"--key=s3cret-arg"}}})
	if r.Status != 201 {
		t.Fatalf("add the server: %d %s", r.Status, r.Body)
	}
	serverID, _ := r.Map()["id"].(string)
	said := `the server's command \"` + missing + `\" was not found on this machine`
	for _, r := range []apitest.Response{
		me.Do(op, "PUT", "/api/bindings", map[string]any{"scope": "organisation", "scope_id": org,
			"catalog_kind": "mcp", "catalog_id": "gone", "enabled": true}),
		me.Do(op, "POST", "/api/mcp/connect", map[string]any{"slug": "gone", "owner_scope": "organisation", "owner_id": org}),
	} {
		if r.Status != 422 || r.ErrorCode() != "server_unlisted" || !strings.Contains(string(r.Body), said) || strings.Contains(string(r.Body), "s3cret") {
			t.Fatalf("missing command: %d %s", r.Status, r.Body)
		}
		if me.Count("mcp_connections") != 0 || me.Count("bindings WHERE catalog_kind = 'mcp'") != 0 {
			t.Fatal("a refused turn-on left a login or a binding behind")
		}
	}
	id := connectionstest.InsertAs(t, me.DB, serverID, "organisation", org, connstore.StatusConnected)
	r = me.Do(op, "POST", "/api/mcp/connections/"+id+"/tools/refresh", nil)
	if r.Status != 502 || r.ErrorCode() != "listing_failed" || !strings.Contains(string(r.Body), said) || strings.Contains(string(r.Body), "s3cret") {
		t.Fatalf("refresh of a login whose command is gone: %d %s", r.Status, r.Body)
	}
}

// Turning on a no-login row whose URL is not an MCP server (a web page) or
// never answers is refused with why: at once for the page, at the row's own
// listing bound for the silent one; nothing is left behind.
func TestNoLoginServerThatIsNotMCP(t *testing.T) {
	me := newMCPEnvDeps(t, false, nil, nil, func(d *api.Deps) { d.URLPolicy = mcpoauth.Policy{AllowLoopback: true} })
	org, _, _ := me.Hierarchy()
	op := me.Operator(org)
	page := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<!doctype html><title>Our product</title>")
	}))
	silent := newHTTPServer(t, http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	for _, c := range []struct{ slug, url, want string }{
		{"site", page, "site could not list its tools: answered with an HTML page, not MCP: is the URL the server's MCP endpoint?"},
		{"silent", silent, "silent could not list its tools: it did not answer within 1s (config.list_timeout_seconds of its catalog row raises the bound)"},
	} {
		if r := me.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": c.slug, "name": c.slug, "transport": "http",
			"auth": "none", "url": c.url, "published": true, "config": map[string]any{"list_timeout_seconds": 1}}); r.Status != 201 {
			t.Fatalf("add %s: %d %s", c.slug, r.Status, r.Body)
		}
		r := me.Do(op, "PUT", "/api/bindings", map[string]any{"scope": "organisation", "scope_id": org,
			"catalog_kind": "mcp", "catalog_id": c.slug, "enabled": true})
		var body struct {
			Error struct{ Code, Message string }
		}
		r.JSON(&body)
		if r.Status != 422 || body.Error.Code != "server_unlisted" || body.Error.Message != c.want {
			t.Fatalf("turn on %s: %d %s", c.slug, r.Status, r.Body)
		}
		if me.Count("mcp_connections") != 0 || me.Count("bindings WHERE catalog_kind = 'mcp'") != 0 {
			t.Fatalf("a refused turn-on of %s left a login or a binding behind", c.slug)
		}
	}
}
