package api_test

import (
	"testing"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/connections/connectionstest"
)

type refusal struct {
	name   string
	token  string // "" = admin
	method string
	path   string
	body   any
	status int
	code   string
}

// checkRefusals sends each request and checks its status and that bindings,
// connections and listed tools are exactly as before.
func checkRefusals(t *testing.T, e *apitest.Env, cases []refusal) {
	t.Helper()
	tables := []string{"bindings", "mcp_tools", "binding_defaults_applied", "mcp_servers", "mcp_catalog_tools"}
	for _, c := range cases {
		before := map[string]int{}
		for _, tb := range tables {
			before[tb] = e.Count(tb)
		}
		logins := connectionstest.Count(t, e.DB)
		tok := c.token
		if tok == "" {
			tok = e.AdminToken
		}
		r := e.Do(tok, c.method, c.path, c.body)
		if r.Status != c.status || (c.code != "" && r.ErrorCode() != c.code) {
			t.Errorf("%s: got %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
		}
		for _, tb := range tables {
			if n := e.Count(tb); n != before[tb] {
				t.Errorf("%s: %s went from %d to %d rows", c.name, tb, before[tb], n)
			}
		}
		if n := connectionstest.Count(t, e.DB); n != logins {
			t.Errorf("%s: logins went from %d to %d", c.name, logins, n)
		}
	}
}

func TestBindingRefusalsWriteNothing(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	org, guild, ann := e.Hierarchy()
	bob := secondAgent(t, e, guild)
	var other map[string]any
	e.Admin("POST", "/api/orgs", map[string]any{"name": "Other"}).JSON(&other)
	otherOrg := other["id"].(string)
	annLogin := login(t, e, "x", "agent", ann, "search")
	guildLogin := login(t, e, "qonto", "guild", guild, "get_transaction")
	otherLogin := login(t, e, "alchemy", "organisation", otherOrg, "nft")
	op := e.Operator(org)
	b := func(kv ...any) map[string]any {
		m := map[string]any{"scope": "agent", "scope_id": ann, "catalog_kind": "native_tool", "catalog_id": "note_get", "enabled": true}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(m, kv[i].(string))
			} else {
				m[kv[i].(string)] = kv[i+1]
			}
		}
		return m
	}
	checkRefusals(t, e, []refusal{
		{"unknown kind", "", "PUT", "/api/bindings", b("catalog_kind", "plugin"), 422, "invalid"},
		{"unknown kind on delete", "", "DELETE", "/api/bindings", b("catalog_kind", "plugin"), 422, "invalid"},
		{"connection on native", "", "PUT", "/api/bindings", b("connection_id", annLogin), 422, "invalid"},
		{"connection on mcp_tool", "", "PUT", "/api/bindings", b("catalog_kind", "mcp_tool", "catalog_id", "x_search", "connection_id", annLogin), 422, "invalid"},
		{"report_issue is not a binding", "", "PUT", "/api/bindings", b("catalog_id", "report_issue"), 422, "invalid"},
		{"browser is not a binding", "", "PUT", "/api/bindings", b("catalog_id", "browser_click"), 422, "invalid"},
		{"code tools are not bindings", "", "PUT", "/api/bindings", b("catalog_id", "shell"), 422, "invalid"},
		{"unknown native tool", "", "PUT", "/api/bindings", b("catalog_id", "note_burn"), 422, "invalid"},
		{"enabled missing", "", "PUT", "/api/bindings", b("enabled", nil), 422, "invalid"},
		{"scope_id on platform", "", "PUT", "/api/bindings", b("scope", "platform"), 422, "invalid"},
		{"bad scope", "", "PUT", "/api/bindings", b("scope", "team"), 422, "invalid"},
		{"bad artifact grant", "", "PUT", "/api/bindings", b("catalog_kind", "artifact_grant", "catalog_id", "delete_org"), 422, "invalid"},
		{"unknown server", "", "PUT", "/api/bindings", b("catalog_kind", "mcp", "catalog_id", "nope"), 422, "invalid"},
		{"unlisted mcp tool", "", "PUT", "/api/bindings", b("catalog_kind", "mcp_tool", "catalog_id", "x_nothing"), 422, "invalid"},
		{"agent login at its guild", "", "PUT", "/api/bindings", b("scope", "guild", "scope_id", guild, "catalog_kind", "mcp", "catalog_id", "x", "connection_id", annLogin), 422, "invalid"},
		{"agent login at a sibling", "", "PUT", "/api/bindings", b("scope_id", bob, "catalog_kind", "mcp", "catalog_id", "x", "connection_id", annLogin), 422, "invalid"},
		{"guild login at its organisation", "", "PUT", "/api/bindings", b("scope", "organisation", "scope_id", org, "catalog_kind", "mcp", "catalog_id", "qonto", "connection_id", guildLogin), 422, "invalid"},
		{"login of another server", "", "PUT", "/api/bindings", b("catalog_kind", "mcp", "catalog_id", "x", "connection_id", guildLogin), 422, "invalid"},
		{"login of another organisation", "", "PUT", "/api/bindings", b("catalog_kind", "mcp", "catalog_id", "alchemy", "connection_id", otherLogin), 422, "invalid"},
		{"login the operator cannot see", op, "PUT", "/api/bindings", b("catalog_kind", "mcp", "catalog_id", "alchemy", "connection_id", otherLogin), 422, "invalid"},
		{"platform scope by an operator", op, "PUT", "/api/bindings", b("scope", "platform", "scope_id", nil), 403, "forbidden"},
		{"platform delete by an operator", op, "DELETE", "/api/bindings", b("scope", "platform", "scope_id", nil), 403, "forbidden"},
		{"scope the operator cannot see", op, "PUT", "/api/bindings", b("scope", "organisation", "scope_id", otherOrg), 404, "not_found"},
		{"absent scope", "", "PUT", "/api/bindings", b("scope_id", "00000000-0000-0000-0000-000000000001"), 404, "not_found"},
		{"delete absent binding", "", "DELETE", "/api/bindings", b("catalog_id", "note_find"), 404, "not_found"},
		{"malformed body", "", "PUT", "/api/bindings", `{"scope":`, 400, "bad_request"},
		{"unknown field", "", "PUT", "/api/bindings", b("extra", 1), 400, "bad_request"},
	})
	// The operator may write at its own scopes.
	if r := e.Do(op, "PUT", "/api/bindings", b()); r.Status != 200 {
		t.Fatalf("operator put: %d %s", r.Status, r.Body)
	}
}

func TestConnectionLifecycleAndRefusals(t *testing.T) {
	t.Parallel()
	e := grantsEnv(t, nil)
	org, guild, _ := e.Hierarchy()
	var other map[string]any
	e.Admin("POST", "/api/orgs", map[string]any{"name": "Other"}).JSON(&other)
	otherOrg := other["id"].(string)
	op := e.Operator(org)

	// Create pending, retry it (same row), connect it, then a new Connect is a conflict.
	r := e.Do(op, "POST", "/api/mcp/connections", map[string]any{"slug": "cigale", "owner_scope": "guild", "owner_id": guild})
	if r.Status != 201 || r.Map()["status"] != "pending" {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	id := r.Map()["id"].(string)
	r = e.Do(op, "POST", "/api/mcp/connections", map[string]any{"server_id": r.Map()["server_id"], "owner_scope": "guild", "owner_id": guild})
	if r.Status != 200 || r.Map()["id"] != id {
		t.Fatalf("retry: %d %s", r.Status, r.Body)
	}
	platformLogin := login(t, e, "etherscan", "platform", "")
	if err := markConnected(e, id); err != nil {
		t.Fatal(err)
	}
	connect := func(slug, scope, owner string) map[string]any {
		m := map[string]any{"slug": slug, "owner_scope": scope}
		if owner != "" {
			m["owner_id"] = owner
		}
		return m
	}
	checkRefusals(t, e, []refusal{
		{"connected login exists", op, "POST", "/api/mcp/connections", connect("cigale", "guild", guild), 409, "conflict"},
		{"platform connect by an operator", op, "POST", "/api/mcp/connections", connect("x", "platform", ""), 403, "platform_scope_reserved"},
		{"owner the operator cannot see", op, "POST", "/api/mcp/connections", connect("x", "organisation", otherOrg), 404, "not_found"},
		{"unknown server", op, "POST", "/api/mcp/connections", connect("nope", "guild", guild), 422, "invalid"},
		{"missing owner id", op, "POST", "/api/mcp/connections", connect("x", "guild", ""), 422, "invalid"},
		{"gmail without the google client", op, "POST", "/api/mcp/connections", connect("gmail", "guild", guild), 422, "not_set_up"},
		{"github without the app", op, "POST", "/api/mcp/connections", connect("github", "guild", guild), 422, "not_set_up"},
		{"delete a platform login as operator", op, "DELETE", "/api/mcp/connections/" + platformLogin, nil, 403, "platform_scope_reserved"},
		{"get an invisible login", e.Operator(otherOrg), "GET", "/api/mcp/connections/" + id, nil, 404, "not_found"},
		{"delete an invisible login", e.Operator(otherOrg), "DELETE", "/api/mcp/connections/" + id, nil, 404, "not_found"},
		{"bad trigger", "", "GET", "/api/agents/00000000-0000-0000-0000-000000000001/offered-tools?trigger=cron", nil, 422, "invalid"},
	})
	// Metadata only, and visibility: the operator sees its login and the platform's.
	r = e.Do(op, "GET", "/api/mcp/connections/"+id, nil)
	if m := r.Map(); r.Status != 200 || m["status"] != "connected" || m["account_hint"] != "acct" || m["config"] != nil {
		t.Fatalf("get: %d %s", r.Status, r.Body)
	}
	var list []map[string]any
	e.Do(op, "GET", "/api/mcp/connections", nil).JSON(&list)
	if len(list) != 2 {
		t.Fatalf("operator list %v", list)
	}
	e.Do(op, "GET", "/api/mcp/connections?owner_scope=guild&owner_id="+guild, nil).JSON(&list)
	if len(list) != 1 || list[0]["id"] != id {
		t.Fatalf("filtered list %v", list)
	}
	e.Do(e.Operator(otherOrg), "GET", "/api/mcp/connections", nil).JSON(&list)
	if len(list) != 1 || list[0]["id"] != platformLogin {
		t.Fatalf("other operator list %v", list)
	}
	// Delete cascades its binding.
	before := e.Count("bindings")
	if r := e.Do(op, "DELETE", "/api/mcp/connections/"+id, nil); r.Status != 204 {
		t.Fatalf("delete: %d", r.Status)
	}
	if e.Count("bindings") != before-1 {
		t.Fatal("connection delete left its binding")
	}
	// With the Google client configured, Gmail connects.
	e2 := grantsEnv(t, map[string]string{"GMAIL_OAUTH_CLIENT_ID": "id", "GMAIL_OAUTH_CLIENT_SECRET": "s"})
	_, g2, _ := e2.Hierarchy()
	if r := e2.Admin("POST", "/api/mcp/connections", connect("gmail", "guild", g2)); r.Status != 201 {
		t.Fatalf("gmail with client: %d %s", r.Status, r.Body)
	}
}
