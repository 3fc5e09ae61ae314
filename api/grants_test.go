package api_test

import (
	"context"
	"testing"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
)

// grantsEnv is an API with every native tool stubbed and the boot seeds written.
func grantsEnv(t *testing.T, env map[string]string) *apitest.Env {
	t.Helper()
	e := apitest.New(t, apitest.Options{Env: env, Tweak: func(d *api.Deps) { d.Tools = grantstest.Registry() }})
	if err := grants.Seed(context.Background(), e.DB, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	return e
}

// login connects a server at a scope through the API (a platform login,
// which the API refuses, straight in the database), then completes it the
// way the connector engine does and stores its listing.
func login(t *testing.T, e *apitest.Env, slug, scope, ownerID string, tools ...string) string {
	t.Helper()
	var id string
	if scope == string(grants.ScopePlatform) {
		id = platformRow(t, e.DB, slug)
	} else {
		r := e.Admin("POST", "/api/mcp/connections", map[string]any{"slug": slug, "owner_scope": scope, "owner_id": ownerID})
		if r.Status != 201 {
			t.Fatalf("connect %s: %d %s", slug, r.Status, r.Body)
		}
		id = r.Map()["id"].(string)
	}
	ctx := context.Background()
	if err := connections.MarkConnected(ctx, e.DB, id, "acct"); err != nil {
		t.Fatal(err)
	}
	var list []grants.ListedTool
	for _, n := range tools {
		list = append(list, grants.ListedTool{Name: n})
	}
	if err := grants.SyncListedTools(ctx, e.DB, id, list); err != nil {
		t.Fatal(err)
	}
	return id
}

func offered(t *testing.T, e *apitest.Env, agentID string) map[string]grants.OfferedTool {
	t.Helper()
	r := e.Admin("GET", "/api/agents/"+agentID+"/offered-tools", nil)
	if r.Status != 200 {
		t.Fatalf("offered-tools: %d %s", r.Status, r.Body)
	}
	var o grants.Offer
	r.JSON(&o)
	m := map[string]grants.OfferedTool{}
	for _, tl := range o.Tools {
		m[tl.Name] = tl
	}
	return m
}

func putBinding(t *testing.T, e *apitest.Env, body map[string]any) {
	t.Helper()
	if r := e.Admin("PUT", "/api/bindings", body); r.Status != 200 {
		t.Fatalf("put binding %v: %d %s", body, r.Status, r.Body)
	}
}

func secondAgent(t *testing.T, e *apitest.Env, guildID string) string {
	t.Helper()
	r := e.Admin("POST", "/api/guilds/"+guildID+"/agents", map[string]any{"name": "Bob"})
	if r.Status != 201 {
		t.Fatalf("agent: %d %s", r.Status, r.Body)
	}
	return r.Map()["id"].(string)
}

// Pattern 1: a guild login with its binding gives every member the server's tools.
func TestPatternEnableDownward(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	_, guild, ann := e.Hierarchy()
	bob := secondAgent(t, e, guild)
	conn := login(t, e, "x", "guild", guild, "search", "user")
	for _, a := range []string{ann, bob} {
		got := offered(t, e, a)
		if got["x_search"].ConnectionID != conn || got["x_user"].RemoteName != "user" || got["x_search"].ShapedSchema == nil {
			t.Fatalf("agent %s: %v", a, got)
		}
	}
}

// Pattern 2: an agent overlay with enabled=false revokes the server for that agent only.
func TestPatternOptOut(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	_, guild, ann := e.Hierarchy()
	bob := secondAgent(t, e, guild)
	login(t, e, "x", "guild", guild, "search")
	putBinding(t, e, map[string]any{"scope": "agent", "scope_id": ann, "catalog_kind": "mcp", "catalog_id": "x", "enabled": false})
	if _, ok := offered(t, e, ann)["x_search"]; ok {
		t.Fatal("opted-out agent still offered x_search")
	}
	if _, ok := offered(t, e, bob)["x_search"]; !ok {
		t.Fatal("sibling lost x_search")
	}
}

// Pattern 3: one agent gets a server the rest of its guild does not have.
func TestPatternEnableExtra(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	_, guild, ann := e.Hierarchy()
	bob := secondAgent(t, e, guild)
	login(t, e, "qonto", "agent", ann, "list_bank_accounts")
	if _, ok := offered(t, e, ann)["qonto_list_bank_accounts"]; !ok {
		t.Fatal("agent login not offered")
	}
	if _, ok := offered(t, e, bob)["qonto_list_bank_accounts"]; ok {
		t.Fatal("an agent's own login leaked to its sibling")
	}
}

// Pattern 4: an agent overlay naming another login is a local relogin.
func TestPatternOverrideLogin(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	_, guild, ann := e.Hierarchy()
	bob := secondAgent(t, e, guild)
	guildLogin := login(t, e, "x", "guild", guild, "search")
	annLogin := login(t, e, "x", "agent", ann, "search", "posts")
	putBinding(t, e, map[string]any{"scope": "agent", "scope_id": ann, "catalog_kind": "mcp", "catalog_id": "x",
		"enabled": true, "connection_id": annLogin})
	a := offered(t, e, ann)
	if a["x_search"].ConnectionID != annLogin || a["x_posts"].ConnectionID != annLogin {
		t.Fatalf("ann: %v", a)
	}
	b := offered(t, e, bob)
	if b["x_search"].ConnectionID != guildLogin || b["x_posts"].Name != "" {
		t.Fatalf("bob: %v", b)
	}
}

// Pattern 5: a narrower scope turns back on what a wider one turned off.
func TestPatternReEnable(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	org, guild, ann := e.Hierarchy()
	bob := secondAgent(t, e, guild)
	login(t, e, "x", "organisation", org, "search")
	putBinding(t, e, map[string]any{"scope": "organisation", "scope_id": org, "catalog_kind": "native_tool", "catalog_id": "note_get", "enabled": false})
	putBinding(t, e, map[string]any{"scope": "guild", "scope_id": guild, "catalog_kind": "mcp", "catalog_id": "x", "enabled": false})
	if got := offered(t, e, ann); got["note_get"].Name != "" || got["x_search"].Name != "" {
		t.Fatalf("off upstream still offered: %v", got)
	}
	putBinding(t, e, map[string]any{"scope": "agent", "scope_id": ann, "catalog_kind": "native_tool", "catalog_id": "note_get", "enabled": true})
	putBinding(t, e, map[string]any{"scope": "agent", "scope_id": ann, "catalog_kind": "mcp", "catalog_id": "x", "enabled": true})
	if got := offered(t, e, ann); got["note_get"].Name == "" || got["x_search"].Name == "" {
		t.Fatalf("re-enabled agent: %v", got)
	}
	if got := offered(t, e, bob); got["note_get"].Name != "" || got["x_search"].Name != "" {
		t.Fatalf("re-enable leaked to sibling: %v", got)
	}
	// Deleting the agent's rows makes it inherit the Off again.
	if r := e.Admin("DELETE", "/api/bindings", map[string]any{"scope": "agent", "scope_id": ann, "catalog_kind": "native_tool", "catalog_id": "note_get"}); r.Status != 204 {
		t.Fatalf("delete binding: %d %s", r.Status, r.Body)
	}
	if offered(t, e, ann)["note_get"].Name != "" {
		t.Fatal("deleted overlay still applies")
	}
}

func markConnected(e *apitest.Env, id string) error {
	return connections.MarkConnected(context.Background(), e.DB, id, "acct")
}
