package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/secret"
)

// A catalog row's OAuth client secret (typed by the admin or returned by a
// dynamic registration) never appears in an API response, and sending back
// the config as read keeps it.
func TestCatalogNeverReturnsTheClientSecret(t *testing.T) {
	t.Parallel()
	entry, _ := secret.GenerateKey("k1")
	kr, _ := secret.ParseKeyring(entry)
	e := apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) { d.Tools = grantstest.Registry(); d.MCP.Keyring = kr }})
	if err := grants.Seed(context.Background(), e.DB, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	const secret = "s3cr3t-client-value"
	r := e.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "acme", "name": "Acme", "transport": "http", "auth": "oauth",
		"url": "https://mcp.acme.test/mcp", "config": map[string]any{"provider": "oauth2",
			"oauth": map[string]any{"client_id": "cid", "client_secret": secret}}})
	if r.Status != 201 || strings.Contains(string(r.Body), secret) || r.Map()["oauth_setup_state"] != "configured" {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	// What a dynamic registration stores on a seeded row.
	if _, err := e.DB.Exec(context.Background(), `UPDATE mcp_servers SET config = config ||
		'{"oauth":{"client_id":"dyn","client_secret":"`+secret+`","registered":true}}'::jsonb WHERE slug = 'notion'`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ token, path string }{{e.Operator(""), "/api/mcp/servers"}, {e.AdminToken, "/api/admin/mcp/servers"},
		{e.AdminToken, "/api/admin/mcp/servers/acme"}, {e.AdminToken, "/api/admin/mcp/servers/notion"}} {
		r := e.Do(c.token, "GET", c.path, nil)
		if r.Status != 200 || strings.Contains(string(r.Body), secret) || !strings.Contains(string(r.Body), `"client_secret_set":true`) {
			t.Errorf("GET %s: %d %s", c.path, r.Status, r.Body)
		}
	}
	// The admin edits the row with the config they read: the stored secret stays.
	var cur grants.Server
	e.Admin("GET", "/api/admin/mcp/servers/acme", nil).JSON(&cur)
	if r := e.Admin("PATCH", "/api/admin/mcp/servers/acme", map[string]any{"config": cur.Config, "description": "ours"}); r.Status != 200 ||
		strings.Contains(string(r.Body), secret) {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	// It is stored sealed, never in clear, and opens for the engine.
	var stored json.RawMessage
	if err := e.DB.QueryRow(context.Background(), `SELECT config FROM mcp_servers WHERE slug = 'acme'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	opened, err := connectors.OpenCatalogSecrets(kr, "acme", stored)
	if strings.Contains(string(stored), secret) || strings.Contains(string(stored), "client_secret_set") || err != nil ||
		!strings.Contains(string(opened), `"client_secret":"`+secret+`"`) {
		t.Fatalf("stored after patch: %s (%v)", stored, err)
	}
	// A configured OAuth client makes the row connectable.
	_, guild, _ := e.Hierarchy()
	if r := e.Admin("POST", "/api/mcp/connections", map[string]any{"slug": "acme", "owner_scope": "guild", "owner_id": guild}); r.Status != 201 {
		t.Fatalf("connect acme: %d %s", r.Status, r.Body)
	}
}

// Where a login may be bound, the allowed half: a platform login anywhere, an
// organisation login below it, a guild login at its members.
func TestBindingALoginBelowItsOwner(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	org, guild, ann := e.Hierarchy()
	bob := secondAgent(t, e, guild)
	platformLogin := login(t, e, "etherscan", "platform", "", "get_balance")
	orgLogin := login(t, e, "x", "organisation", org, "search")
	guildLogin := login(t, e, "qonto", "guild", guild, "get_transaction")
	orgX := login(t, e, "alchemy", "organisation", org, "nft")
	op := e.Operator(org)
	bind := func(scope, id, slug, conn string) {
		t.Helper()
		r := e.Do(op, "PUT", "/api/bindings", map[string]any{"scope": scope, "scope_id": id, "catalog_kind": "mcp", "catalog_id": slug,
			"enabled": true, "connection_id": conn})
		if r.Status != 200 || r.Map()["connection_id"] != conn {
			t.Fatalf("bind %s at %s: %d %s", slug, scope, r.Status, r.Body)
		}
	}
	bind("organisation", org, "etherscan", platformLogin)
	bind("agent", ann, "x", orgLogin)
	bind("agent", bob, "qonto", guildLogin)
	bind("guild", guild, "alchemy", orgX)
	got := offered(t, e, bob)
	if got["etherscan_get_balance"].ConnectionID != platformLogin || got["x_search"].ConnectionID != orgLogin ||
		got["qonto_get_transaction"].ConnectionID != guildLogin || got["alchemy_nft"].ConnectionID != orgX {
		t.Fatalf("bob: %v", got)
	}
}

func TestMoreGrantRefusalsWriteNothing(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	org, guild, ann := e.Hierarchy()
	var other map[string]any
	e.Admin("POST", "/api/orgs", map[string]any{"name": "Other"}).JSON(&other)
	otherOrg := other["id"].(string)
	op := e.Operator(org)
	stranger := e.Operator(otherOrg)
	xLogin := login(t, e, "x", "guild", guild, "search")
	login(t, e, "x", "organisation", otherOrg, "their_private_tool")
	if r := e.Admin("PATCH", "/api/admin/mcp/servers/etherscan", map[string]any{"published": false}); r.Status != 200 {
		t.Fatalf("unpublish: %d %s", r.Status, r.Body)
	}
	checkRefusals(t, e, []refusal{
		{"list bindings of a bad scope", op, "GET", "/api/bindings?scope=team&scope_id=" + guild, nil, 422, "invalid"},
		{"list bindings of an invisible scope", stranger, "GET", "/api/bindings?scope=guild&scope_id=" + guild, nil, 404, "not_found"},
		{"list connections of a bad scope", op, "GET", "/api/mcp/connections?owner_scope=team&owner_id=" + guild, nil, 422, "invalid"},
		{"list connections by owner id alone", op, "GET", "/api/mcp/connections?owner_id=" + guild, nil, 422, "invalid"},
		{"list connections of an invisible owner", stranger, "GET", "/api/mcp/connections?owner_scope=guild&owner_id=" + guild, nil, 404, "not_found"},
		{"connect an unpublished server", op, "POST", "/api/mcp/connections", map[string]any{"slug": "etherscan", "owner_scope": "guild", "owner_id": guild}, 422, "invalid"},
		{"get an absent login", op, "GET", "/api/mcp/connections/00000000-0000-0000-0000-000000000001", nil, 404, "not_found"},
		{"delete an absent login", op, "DELETE", "/api/mcp/connections/00000000-0000-0000-0000-000000000001", nil, 404, "not_found"},
		{"admin list by an operator", op, "GET", "/api/admin/mcp/servers", nil, 403, "forbidden"},
		{"admin patch by an operator", op, "PATCH", "/api/admin/mcp/servers/x", map[string]any{"description": "mine"}, 403, "forbidden"},
		{"admin delete by an operator", op, "DELETE", "/api/admin/mcp/servers/x", nil, 403, "forbidden"},
		{"get an absent server", "", "GET", "/api/admin/mcp/servers/nothing", nil, 404, "not_found"},
		{"patch an absent server", "", "PATCH", "/api/admin/mcp/servers/nothing", map[string]any{"description": "d"}, 404, "not_found"},
		{"patch with a config that is not an object", "", "PATCH", "/api/admin/mcp/servers/x", map[string]any{"config": []int{1}}, 422, "invalid"},
		{"agent view by a stranger", stranger, "GET", "/api/agents/" + ann + "/tools", nil, 404, "not_found"},
		{"offered tools by a stranger", stranger, "GET", "/api/agents/" + ann + "/offered-tools", nil, 404, "not_found"},
		{"offered tools of an absent agent", "", "GET", "/api/agents/00000000-0000-0000-0000-000000000001/offered-tools", nil, 404, "not_found"},
		{"a tool only another organisation's login lists", op, "PUT", "/api/bindings", map[string]any{"scope": "guild", "scope_id": guild,
			"catalog_kind": "mcp_tool", "catalog_id": "x_their_private_tool", "enabled": false}, 422, "invalid"},
		{"delete a binding by a stranger", stranger, "DELETE", "/api/bindings", map[string]any{"scope": "guild", "scope_id": guild,
			"catalog_kind": "mcp", "catalog_id": "x"}, 404, "not_found"},
	})
	// Its own organisation's operator may overlay it; the operator may overlay a tool its guild's login lists.
	if r := e.Do(stranger, "PUT", "/api/bindings", map[string]any{"scope": "organisation", "scope_id": otherOrg,
		"catalog_kind": "mcp_tool", "catalog_id": "x_their_private_tool", "enabled": false}); r.Status != 200 {
		t.Fatalf("owner's overlay: %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "PUT", "/api/bindings", map[string]any{"scope": "guild", "scope_id": guild,
		"catalog_kind": "mcp_tool", "catalog_id": "x_search", "enabled": false}); r.Status != 200 {
		t.Fatalf("guild overlay: %d %s", r.Status, r.Body)
	}
	// A disconnected login of an enabled server: the offer is refused with a message naming it, and Connect retries the same row.
	if err := connections.MarkDisconnected(context.Background(), e.DB, xLogin); err != nil {
		t.Fatal(err)
	}
	r := e.Admin("GET", "/api/agents/"+ann+"/offered-tools", nil)
	if r.Status != 409 || r.ErrorCode() != "connection_disconnected" || !strings.Contains(string(r.Body), "X login") {
		t.Fatalf("offered with a disconnected login: %d %s", r.Status, r.Body)
	}
	before := connectionstest.Count(t, e.DB)
	r = e.Do(op, "POST", "/api/mcp/connections", map[string]any{"slug": "x", "owner_scope": "guild", "owner_id": guild})
	if r.Status != 200 || r.Map()["id"] != xLogin || connectionstest.Count(t, e.DB) != before {
		t.Fatalf("retry a disconnected login: %d %s", r.Status, r.Body)
	}
}

// The Tools view shows the login owned at its scope even before it is
// connected (no binding names it yet), and only at that scope.
func TestToolsViewShowsTheScopesOwnPendingLogin(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	_, guild, ann := e.Hierarchy()
	r := e.Admin("POST", "/api/mcp/connections", map[string]any{"slug": "cigale", "owner_scope": "guild", "owner_id": guild})
	if r.Status != 201 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	id := r.Map()["id"].(string)
	server := func(path string) grants.ServerView {
		t.Helper()
		var v grants.ToolsView
		if r := e.Admin("GET", path, nil); r.Status != 200 {
			t.Fatalf("%s: %d %s", path, r.Status, r.Body)
		} else {
			r.JSON(&v)
		}
		for _, s := range v.Servers {
			if s.Slug == "cigale" {
				return s
			}
		}
		t.Fatalf("%s: no cigale", path)
		return grants.ServerView{}
	}
	g := server("/api/guilds/" + guild + "/tools")
	if g.OwnLogin == nil || g.OwnLogin.ID != id || g.OwnLogin.Status != "pending" || g.Login != nil || g.Enabled {
		t.Fatalf("guild view: %+v", g)
	}
	if a := server("/api/agents/" + ann + "/tools"); a.OwnLogin != nil {
		t.Fatalf("agent view shows the guild's login as its own: %+v", a.OwnLogin)
	}
	if err := markConnected(e, id); err != nil {
		t.Fatal(err)
	}
	if a := server("/api/agents/" + ann + "/tools"); a.Login == nil || a.Login.ID != id || a.Login.DecidedBy != grants.ScopeGuild || !a.Enabled {
		t.Fatalf("agent view after connect: %+v", a)
	}
}

// A catalog URL the platform must not call (a cloud metadata address, a
// private network, plain http to a public host) is refused when the admin
// saves it, with every problem of the request listed, and nothing is written.
func TestCatalogRefusesInternalURLs(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	before := e.Count("mcp_servers")
	for _, url := range []string{"http://169.254.169.254/latest/meta-data", "https://10.1.2.3/mcp", "http://mcp.acme.test/mcp", "https://127.0.0.1:9/mcp"} {
		r := e.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "acme", "name": "", "transport": "http", "auth": "none", "url": url})
		if r.Status != 422 || !strings.Contains(string(r.Body), `"field":"url"`) || !strings.Contains(string(r.Body), `"field":"name"`) {
			t.Errorf("create with %s: %d %s", url, r.Status, r.Body)
		}
	}
	if r := e.Admin("PATCH", "/api/admin/mcp/servers/notion", map[string]any{"url": "https://192.168.0.10/mcp"}); r.Status != 422 {
		t.Errorf("patch to a private address: %d %s", r.Status, r.Body)
	}
	if n := e.Count("mcp_servers"); n != before {
		t.Errorf("mcp_servers went from %d to %d", before, n)
	}
	var url string
	if err := e.DB.QueryRow(context.Background(), `SELECT url FROM mcp_servers WHERE slug = 'notion'`).Scan(&url); err != nil || url != "https://mcp.notion.com/mcp" {
		t.Errorf("notion url after refused patch: %q %v", url, err)
	}
	if r := e.Admin("POST", "/api/admin/mcp/servers", map[string]any{"slug": "acme", "name": "Acme", "transport": "http", "auth": "none",
		"url": "https://mcp.acme.test/mcp"}); r.Status != 201 {
		t.Errorf("a public https URL: %d %s", r.Status, r.Body)
	}
}
