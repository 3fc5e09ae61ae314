package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/grants"
)

func TestCatalogSetupStatesAndAdminEdits(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, map[string]string{"GMAIL_OAUTH_CLIENT_ID": "id", "GMAIL_OAUTH_CLIENT_SECRET": "s"})
	var servers []grants.Server
	r := e.Do(e.Operator(""), "GET", "/api/mcp/servers", nil)
	r.JSON(&servers)
	if r.Status != 200 || len(servers) != 16 {
		t.Fatalf("servers: %d %d", r.Status, len(servers))
	}
	state := map[string]grants.Server{}
	for _, s := range servers {
		state[s.Slug] = s
	}
	for slug, want := range map[string]string{"notion": "dynamic", "sentry": "dynamic", "gmail": "configured", "drive": "configured",
		"github": "unsupported", "cigale": "not_applicable", "wallet": "not_applicable"} {
		if state[slug].OAuthSetupState != want {
			t.Errorf("%s: %s, want %s", slug, state[slug].OAuthSetupState, want)
		}
	}
	if len(state["github"].MissingVariables) != 5 {
		t.Errorf("github missing %v", state["github"].MissingVariables)
	}
	// Admin catalog: unpublish hides a server from operators; non-admins are refused.
	if r := e.Admin("PATCH", "/api/admin/mcp/servers/etherscan", map[string]any{"published": false}); r.Status != 200 || r.Map()["copy_source"] != "admin" {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	e.Admin("GET", "/api/mcp/servers", nil).JSON(&servers)
	if len(servers) != 15 {
		t.Fatalf("unpublished still listed: %d", len(servers))
	}
	r = e.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "acme", "name": "Acme", "transport": "http", "auth": "token",
		"url": "https://mcp.acme.test/mcp", "tools": []map[string]any{{"name": "ping", "input_schema": map[string]any{"type": "object"}}}})
	if r.Status != 201 || r.Map()["copy_source"] != "admin" {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	checkRefusals(t, e, []refusal{
		{"operator edits catalog", e.Operator(""), "POST", "/api/admin/mcp/servers", map[string]any{"slug": "b", "name": "B", "transport": "http", "auth": "none"}, 403, "forbidden"},
		{"duplicate slug", "", "POST", "/api/admin/mcp/servers", map[string]any{"slug": "acme", "name": "B", "transport": "http", "auth": "none"}, 409, "conflict"},
		{"bad auth", "", "POST", "/api/admin/mcp/servers", map[string]any{"slug": "b", "name": "B", "transport": "http", "auth": "magic"}, 422, "invalid"},
		{"unshapeable tool", "", "POST", "/api/admin/mcp/servers", map[string]any{"slug": "b", "name": "B", "transport": "http", "auth": "none",
			"tools": []map[string]any{{"name": "t", "input_schema": map[string]any{"type": "string"}}}}, 422, "invalid"},
		{"slug change", "", "PATCH", "/api/admin/mcp/servers/acme", map[string]any{"slug": "other"}, 422, "invalid"},
		{"delete absent", "", "DELETE", "/api/admin/mcp/servers/nothing", nil, 404, "not_found"},
	})
	if r := e.Admin("DELETE", "/api/admin/mcp/servers/acme", nil); r.Status != 204 {
		t.Fatalf("delete: %d", r.Status)
	}
}

func TestToolsViews(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	org, guild, ann := e.Hierarchy()
	// Gmail connected while the box still had its Google client; the client has since been removed.
	gmailLogin := connectionstest.InsertOf(t, e.DB, "gmail", "guild", guild)
	if err := markConnected(e, gmailLogin); err != nil {
		t.Fatal(err)
	}
	if err := grants.SyncListedTools(context.Background(), e.DB, gmailLogin,
		[]grants.ListedTool{{Name: "search_threads"}, {Name: "send_message"}}); err != nil {
		t.Fatal(err)
	}
	putBinding(t, e, map[string]any{"scope": "guild", "scope_id": guild, "catalog_kind": "native_tool", "catalog_id": "group_post", "enabled": false})
	var v grants.ToolsView
	r := e.Admin("GET", "/api/agents/"+ann+"/tools", nil)
	if r.Status != 200 {
		t.Fatalf("view: %d %s", r.Status, r.Body)
	}
	r.JSON(&v)
	native := map[string]grants.NativeToolView{}
	for _, n := range v.Native {
		native[n.Name] = n
	}
	if tv := native["tavily_search"]; tv.Offered || len(tv.MissingVariables) != 1 || tv.MissingVariables[0] != "TAVILY_API_KEY" {
		t.Errorf("tavily %+v", tv)
	}
	if native["secret_store"].Group != "Secrets" || native["secret_request"].Group != "Secrets" {
		t.Error("secret tools are not grouped as Secrets")
	}
	if gp := native["group_post"]; gp.Enabled || gp.DecidedBy != grants.ScopeGuild || gp.Switch != grants.SwitchInherit {
		t.Errorf("group_post %+v", gp)
	}
	if bc := native["browser_click"]; bc.IsBinding || bc.Offered {
		t.Errorf("browser_click %+v", bc)
	}
	servers := map[string]grants.ServerView{}
	for _, s := range v.Servers {
		servers[s.Slug] = s
	}
	// Gmail was connected before the client was set: it is Not set up, but the login resolves.
	gm := servers["gmail"]
	if gm.SetUp || len(gm.MissingVariables) != 2 || gm.Login == nil || gm.Login.DecidedBy != grants.ScopeGuild || !gm.Enabled {
		t.Errorf("gmail %+v", gm)
	}
	tools := map[string]grants.ServerToolView{}
	for _, tl := range gm.Tools {
		tools[tl.Name] = tl
	}
	if tools["gmail_send_message"].Enabled || !tools["gmail_search_threads"].Enabled || !tools["gmail_search_threads"].Listed {
		t.Errorf("gmail tools %+v", gm.Tools)
	}
	if gh := servers["github"]; gh.HasSwitch || gh.SetUp {
		t.Errorf("github %+v", gh)
	}
	if cg := servers["coingecko"]; len(cg.Tools) != 8 || cg.Tools[0].Listed {
		t.Errorf("coingecko catalog tools %+v", cg.Tools)
	}
	for _, p := range []string{"/api/orgs/" + org + "/tools", "/api/guilds/" + guild + "/tools"} {
		if r := e.Admin("GET", p, nil); r.Status != 200 {
			t.Errorf("%s: %d", p, r.Status)
		}
		if r := e.Do(e.Operator(""), "GET", p, nil); r.Status != 404 {
			t.Errorf("%s by a stranger: %d", p, r.Status)
		}
	}
	// Offered tools per trigger: schedules leave group and schedule runs as the rules say.
	for trig, want := range map[string]bool{"direct": true, "group": false, "schedule": false} {
		var o grants.Offer
		e.Admin("GET", "/api/agents/"+ann+"/offered-tools?trigger="+trig, nil).JSON(&o)
		has := false
		for _, tl := range o.Tools {
			has = has || tl.Name == "secret_request"
		}
		if has != want {
			t.Errorf("secret_request on %s: %v", trig, has)
		}
	}
}

// An instance admin may give a slow server longer listing and call
// timeouts; a value out of bounds is a 422 naming the field.
func TestCatalogRowTimeouts(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	row := func(slug string, cfg map[string]any) map[string]any {
		return map[string]any{"slug": slug, "name": slug, "transport": "http", "auth": "token", "url": "https://mcp." + slug + ".test/mcp", "config": cfg}
	}
	if r := e.Admin("POST", "/api/admin/mcp/servers", row("slowinit", map[string]any{"list_timeout_seconds": 45, "call_timeout_seconds": 240})); r.Status != 201 {
		t.Fatalf("create with timeouts: %d %s", r.Status, r.Body)
	}
	for field, cfg := range map[string]map[string]any{
		"config.list_timeout_seconds": {"list_timeout_seconds": 121},
		"config.call_timeout_seconds": {"call_timeout_seconds": -1},
	} {
		r := e.Admin("POST", "/api/admin/mcp/servers", row("bad"+field[7:11], cfg))
		if r.Status != 422 || !strings.Contains(string(r.Body), field) {
			t.Errorf("%v: %d %s", cfg, r.Status, r.Body)
		}
	}
}
