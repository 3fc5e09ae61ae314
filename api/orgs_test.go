package api_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/apitest"
)

func TestOrganisationLifecycle(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	r := e.Admin("POST", "/api/orgs", map[string]any{"name": "Acme Corp"})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	org := r.Map()
	if org["slug"] != "acme-corp" {
		t.Errorf("slug %v", org["slug"])
	}
	id := org["id"].(string)
	if r := e.Admin("GET", "/api/orgs/"+id, nil); r.Status != 200 {
		t.Fatalf("get: %d", r.Status)
	}
	if r := e.Admin("PATCH", "/api/orgs/"+id, map[string]any{"name": "Acme"}); r.Status != 200 || r.Map()["name"] != "Acme" {
		t.Fatalf("patch: %d %s", r.Status, r.Body)
	}
	var list []map[string]any
	e.Admin("GET", "/api/orgs", nil).JSON(&list)
	if len(list) != 1 {
		t.Fatalf("list: %v", list)
	}
	if r := e.Admin("DELETE", "/api/orgs/"+id, nil); r.Status != 204 {
		t.Fatalf("delete: %d", r.Status)
	}
	if r := e.Admin("GET", "/api/orgs/"+id, nil); r.Status != 404 || r.ErrorCode() != "not_found" {
		t.Fatalf("after delete: %d %s", r.Status, r.Body)
	}
}

func TestGuildAndAgentLifecycle(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	orgID, guildID, agentID := e.Hierarchy()
	a := e.Admin("GET", "/api/agents/"+agentID, nil).Map()
	cfg := a["config"].(map[string]any)
	if cfg["max_scripts"].(float64) != 10 || cfg["scripting"] != true || cfg["memory"] != true || cfg["browser"] != false {
		t.Errorf("default config %v", cfg)
	}
	if a["organisation_id"] != orgID || a["guild_id"] != guildID {
		t.Errorf("agent parents %v", a)
	}
	r := e.Admin("PATCH", "/api/agents/"+agentID, map[string]any{"config": map[string]any{"coding": true}})
	cfg = r.Map()["config"].(map[string]any)
	if r.Status != 200 || cfg["coding"] != true || cfg["scripting"] != true {
		t.Fatalf("patch config: %d %s", r.Status, r.Body)
	}
	var agents []map[string]any
	e.Admin("GET", "/api/guilds/"+guildID+"/agents", nil).JSON(&agents)
	if len(agents) != 1 {
		t.Fatalf("agents %v", agents)
	}
	// Deleting the guild takes its agents with it.
	if r := e.Admin("DELETE", "/api/guilds/"+guildID, nil); r.Status != 204 {
		t.Fatalf("delete guild: %d", r.Status)
	}
	if r := e.Admin("GET", "/api/agents/"+agentID, nil); r.Status != 404 {
		t.Fatalf("agent after guild delete: %d", r.Status)
	}
}

func TestVisibilityByMembership(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	orgA, guildA, agentA := e.Hierarchy()
	var orgB map[string]any
	e.Admin("POST", "/api/orgs", map[string]any{"name": "Other"}).JSON(&orgB)
	op := e.Operator(orgB["id"].(string))

	for _, path := range []string{"/api/orgs/" + orgA, "/api/orgs/" + orgA + "/guilds", "/api/guilds/" + guildA,
		"/api/guilds/" + guildA + "/agents", "/api/agents/" + agentA} {
		if r := e.Do(op, "GET", path, nil); r.Status != 404 {
			t.Errorf("GET %s by a non-member: %d, want 404", path, r.Status)
		}
	}
	if r := e.Do(op, "DELETE", "/api/agents/"+agentA, nil); r.Status != 404 {
		t.Errorf("delete by non-member: %d", r.Status)
	}
	if r := e.Do(op, "POST", "/api/orgs/"+orgA+"/guilds", map[string]any{"name": "x"}); r.Status != 404 {
		t.Errorf("create guild in another org: %d", r.Status)
	}
	var list []map[string]any
	e.Do(op, "GET", "/api/orgs", nil).JSON(&list)
	if len(list) != 1 || list[0]["id"] != orgB["id"] {
		t.Errorf("operator sees %v", list)
	}
	// An operator who creates an organisation becomes its member.
	r := e.Do(op, "POST", "/api/orgs", map[string]any{"name": "Mine"})
	if r.Status != 201 {
		t.Fatal(r.Status)
	}
	if r := e.Do(op, "GET", "/api/orgs/"+r.Map()["id"].(string), nil); r.Status != 200 {
		t.Errorf("creator cannot see its organisation: %d", r.Status)
	}
	// Admin-only routes are 403 for operators.
	if r := e.Do(op, "POST", "/api/users", map[string]any{"name": "x"}); r.Status != 403 {
		t.Errorf("operator creating users: %d", r.Status)
	}
	if r := e.Do(op, "GET", "/api/users", nil); r.Status != 403 {
		t.Errorf("operator listing users: %d", r.Status)
	}
	// The instance admin's list names each user's organisations and state.
	r = e.Admin("GET", "/api/users", nil)
	if r.Status != 200 {
		t.Fatalf("list users: %d %s", r.Status, r.Body)
	}
	var users []struct {
		Name          string
		DisabledAt    *string `json:"disabled_at"`
		Organisations []struct{ Name string }
	}
	if err := json.Unmarshal(r.Body, &users); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, u := range users {
		if len(u.Organisations) > 0 && u.Organisations[0].Name == "Mine" && u.DisabledAt == nil {
			found = true
		}
	}
	if !found {
		t.Errorf("the list does not show the operator as a member of Mine: %s", r.Body)
	}
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	for _, tok := range []string{"", "gld_nope", "not-a-token"} {
		if r := e.Do(tok, "GET", "/api/instance", nil); r.Status != 401 || r.ErrorCode() != "unauthenticated" {
			t.Errorf("token %q: %d %s", tok, r.Status, r.Body)
		}
	}
	if r := e.Do("", "GET", "/healthz", nil); r.Status != 200 {
		t.Errorf("healthz: %d", r.Status)
	}
}

func TestBadInputWritesNothing(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	orgID, guildID, _ := e.Hierarchy()
	cases := []struct {
		name, method, path string
		body               any
		status             int
		wantInMessage      string
	}{
		{"malformed json", "POST", "/api/orgs", `{"name":`, 400, "malformed JSON"},
		{"wrong type names field", "POST", "/api/orgs", `{"name": 3}`, 400, `field \"name\"`},
		{"unknown field", "POST", "/api/orgs", `{"name":"x","colour":"red"}`, 400, `unknown field \"colour\"`},
		{"empty body", "POST", "/api/orgs", ``, 400, "JSON object"},
		{"missing name", "POST", "/api/orgs", map[string]any{}, 422, "name"},
		{"bad slug and name", "POST", "/api/orgs", map[string]any{"name": " ", "slug": "Bad Slug"}, 422, "slug"},
		{"duplicate guild", "POST", "/api/orgs/" + orgID + "/guilds", map[string]any{"name": "Guild"}, 409, ""},
		{"unknown org", "POST", "/api/orgs/00000000-0000-0000-0000-000000000000/guilds", map[string]any{"name": "g"}, 404, ""},
		{"malformed id", "GET", "/api/agents/not-a-uuid", nil, 404, ""},
		{"bad max_scripts", "POST", "/api/guilds/" + guildID + "/agents", map[string]any{"name": "b", "config": map[string]any{"max_scripts": -1}}, 422, "max_scripts"},
	}
	before := [3]int{e.Count("organisations"), e.Count("guilds"), e.Count("agents")}
	for _, c := range cases {
		r := e.Admin(c.method, c.path, c.body)
		if r.Status != c.status {
			t.Errorf("%s: status %d, want %d (%s)", c.name, r.Status, c.status, r.Body)
			continue
		}
		if r.ErrorCode() == "" {
			t.Errorf("%s: body is not an error object: %s", c.name, r.Body)
		}
		if c.wantInMessage != "" && !contains(string(r.Body), c.wantInMessage) {
			t.Errorf("%s: %s does not mention %s", c.name, r.Body, c.wantInMessage)
		}
	}
	after := [3]int{e.Count("organisations"), e.Count("guilds"), e.Count("agents")}
	if before != after {
		t.Errorf("refused requests wrote rows: %v → %v", before, after)
	}
	// Every problem at once.
	r := e.Admin("POST", "/api/orgs", map[string]any{"name": "", "slug": "NO"})
	probs, _ := r.Map()["error"].(map[string]any)["problems"].([]any)
	if len(probs) != 2 {
		t.Errorf("want both problems listed, got %s", r.Body)
	}
}

func TestCreatedAgentRollsBackWhenLaterStepFails(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	// A user created with a membership in an organisation that does not exist:
	// the user row must not survive the failed membership insert.
	before := e.Count("users")
	r := e.Admin("POST", "/api/users", map[string]any{"name": "x", "organisation_id": "00000000-0000-0000-0000-000000000001"})
	if r.Status != 422 {
		t.Fatalf("status %d %s", r.Status, r.Body)
	}
	if e.Count("users") != before {
		t.Fatal("a failed request left a user behind")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestLocalModeActsAsTheLocalAdmin(t *testing.T) {
	t.Parallel()
	var localID string
	e := apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) {
		u, err := access.LocalUser(context.Background(), d.DB)
		if err != nil {
			t.Fatal(err)
		}
		localID = u.ID
		d.AuthMode, d.LocalUserID = "local", u.ID
	}})
	if localID == "" {
		t.Fatal("no local user")
	}
	r := e.Do("", "POST", "/api/orgs", map[string]any{"name": "Local"})
	if r.Status != 201 {
		t.Fatalf("create without a token in local mode: %d %s", r.Status, r.Body)
	}
	if r := e.Do("", "GET", "/api/instance", nil); r.Status != 200 || r.Map()["auth_mode"] != "local" {
		t.Fatalf("instance: %d %s", r.Status, r.Body)
	}
}
