package api_test

import (
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/connections/connectionstest"
)

// A duplicate name or slug is a 409 that says what already exists, without the
// database constraint's name, and writes nothing.
func TestConflictMessagesSayWhatExists(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	orgID, guildID, _ := e.Hierarchy()
	org := e.Admin("GET", "/api/orgs/"+orgID, nil).Map()
	guild := e.Admin("GET", "/api/guilds/"+guildID, nil).Map()

	cases := []struct {
		name, path string
		body       map[string]any
		table      string
		want       string
	}{
		{"organisation slug", "/api/orgs", map[string]any{"name": org["name"]}, "organisations", "organisation with this slug"},
		{"guild name", "/api/orgs/" + orgID + "/guilds", map[string]any{"name": guild["name"]}, "guilds", "guild with this name"},
		{"agent name", "/api/guilds/" + guildID + "/agents", map[string]any{"name": "Dup"}, "agents", "agent with this name"},
	}
	e.Admin("POST", cases[2].path, cases[2].body)
	for _, c := range cases {
		before := e.Count(c.table)
		r := e.Admin("POST", c.path, c.body)
		if r.Status != 409 || r.ErrorCode() != "conflict" {
			t.Fatalf("%s: %d %s", c.name, r.Status, r.Body)
		}
		msg := r.Map()["error"].(map[string]any)["message"].(string)
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "_key") {
			t.Errorf("%s: message %q", c.name, msg)
		}
		if n := e.Count(c.table); n != before {
			t.Errorf("%s: %s went from %d to %d rows", c.name, c.table, before, n)
		}
	}
}

// A body over the limit is a 413 (documented for every route that takes a body) and writes nothing.
func TestOversizeBodyIs413(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	big := `{"name":"` + strings.Repeat("a", 5<<20) + `"}`
	r := e.Admin("POST", "/api/orgs", big)
	if r.Status != 413 || r.ErrorCode() != "too_large" {
		t.Fatalf("oversize: %d %.200s", r.Status, r.Body)
	}
	if n := e.Count("organisations"); n != 0 {
		t.Errorf("organisations: %d", n)
	}
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]any `json:"responses"`
		} `json:"paths"`
	}
	e.Admin("GET", "/api/openapi.json", nil).JSON(&doc)
	if _, ok := doc.Paths["/api/orgs"]["post"].Responses["413"]; !ok {
		t.Errorf("POST /api/orgs does not document 413")
	}
	if _, ok := doc.Paths["/api/orgs"]["get"].Responses["413"]; ok {
		t.Errorf("GET /api/orgs documents 413 though it takes no body")
	}
}

// Making an id that is not a user's an operator says which id is wrong.
func TestMemberOfUnknownUserSaysSo(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	orgID, _, agentID := e.Hierarchy()
	r := e.Admin("PUT", "/api/orgs/"+orgID+"/members/"+agentID, map[string]any{"role": "operator"})
	if r.Status != 422 || r.ErrorCode() != "invalid_reference" {
		t.Fatalf("member: %d %s", r.Status, r.Body)
	}
	if msg := r.Map()["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "no user has this id") {
		t.Errorf("message %q", msg)
	}
	if n := e.Count("memberships"); n != 0 {
		t.Errorf("memberships: %d", n)
	}
}

// A 404 names what the path's ids were expected to find.
func TestNotFoundNamesTheResource(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	orgID, _, _ := e.Hierarchy()
	const missing = "00000000-0000-0000-0000-000000000001"
	cases := []struct{ method, path, want string }{
		{"GET", "/api/orgs/" + missing, "no organisation with this id"},
		{"GET", "/api/guilds/" + missing, "no guild with this id"},
		{"GET", "/api/agents/" + missing + "/offered-tools", "no agent with this id"},
		{"GET", "/api/runs/" + missing, "no run with this id"},
		{"GET", "/api/mcp/connections/" + missing, "no connection with this id"},
		{"GET", "/api/orgs/" + orgID + "/notes/missing.md", "organisation or note"},
	}
	for _, c := range cases {
		r := e.Admin(c.method, c.path, nil)
		if r.Status != 404 || r.ErrorCode() != "not_found" {
			t.Fatalf("%s %s: %d %s", c.method, c.path, r.Status, r.Body)
		}
		if msg := r.Map()["error"].(map[string]any)["message"].(string); !strings.Contains(msg, c.want) {
			t.Errorf("%s %s: message %q, want %q", c.method, c.path, msg, c.want)
		}
	}
}

// Refusals of a single field name it in the problems list, as every 422 does.
func TestFieldProblemsAreListed(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	orgID, guildID, agentID := e.Hierarchy()
	cases := []struct {
		method, path string
		body         any
		field        string
	}{
		{"PUT", "/api/agents/" + agentID + "/memory", map[string]any{"content": strings.Repeat("a", 12001)}, "content"},
		{"PUT", "/api/agents/" + agentID + "/notes/a..md", map[string]any{"content": "x"}, "key"},
		{"POST", "/api/mcp/connections", map[string]any{"slug": "nope", "owner_scope": "guild", "owner_id": guildID}, "slug"},
		{"GET", "/api/agents/" + agentID + "/offered-tools?trigger=cron", nil, "trigger"},
	}
	col := e.Admin("POST", "/api/orgs/"+orgID+"/collections", map[string]any{"name": "leads",
		"columns": []map[string]any{{"name": "name", "type": "text"}}}).Map()["id"].(string)
	for q, field := range map[string]string{"limit=500": "limit", "order=nope": "order.column", "where=%7B%22nocol%22%3A1%7D": "where.nocol"} {
		cases = append(cases, struct {
			method, path string
			body         any
			field        string
		}{"GET", "/api/collections/" + col + "/records?" + q, nil, field})
	}
	for _, c := range cases {
		r := e.Admin(c.method, c.path, c.body)
		if r.Status != 422 || !strings.Contains(string(r.Body), `"problems":[{"field":"`+c.field+`"`) {
			t.Errorf("%s %s: %d %s", c.method, c.path, r.Status, r.Body)
		}
	}
	if n := connectionstest.Count(t, e.DB) + e.Count("artifacts"); n != 0 {
		t.Errorf("refused requests wrote %d rows", n)
	}
}
