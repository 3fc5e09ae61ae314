package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
)

func TestNotesAPI(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	orgID, guildID, agentID := e.Hierarchy()
	for _, base := range []string{"/api/agents/" + agentID, "/api/guilds/" + guildID, "/api/orgs/" + orgID} {
		if r := e.Admin("PUT", base+"/notes/plan.md", map[string]any{"content": "# Plan"}); r.Status != 201 {
			t.Fatalf("%s put: %d %s", base, r.Status, r.Body)
		}
		if r := e.Admin("PUT", base+"/notes/plan.md", map[string]any{"content": "# Plan v2"}); r.Status != 200 || r.Map()["content"] != "# Plan v2" {
			t.Fatalf("%s replace: %d %s", base, r.Status, r.Body)
		}
		if r := e.Admin("PUT", base+"/notes/plan.txt", map[string]any{"content": "x"}); r.Status != 422 {
			t.Fatalf("%s bad key: %d", base, r.Status)
		}
		var list []map[string]any
		e.Admin("GET", base+"/notes", nil).JSON(&list)
		if len(list) != 1 || list[0]["key"] != "plan.md" {
			t.Fatalf("%s list: %v", base, list)
		}
		if r := e.Admin("GET", base+"/notes/plan.md", nil); r.Status != 200 {
			t.Fatalf("%s get: %d", base, r.Status)
		}
	}
	if n := e.Count("artifacts"); n != 3 {
		t.Fatalf("%d artifacts", n)
	}
	var other map[string]any
	e.Admin("POST", "/api/orgs", map[string]any{"name": "Other"}).JSON(&other)
	op := e.Operator(other["id"].(string))
	for _, p := range []string{"/api/agents/" + agentID + "/notes", "/api/guilds/" + guildID + "/notes/plan.md", "/api/orgs/" + orgID + "/notes"} {
		if r := e.Do(op, "GET", p, nil); r.Status != 404 {
			t.Errorf("outsider %s: %d", p, r.Status)
		}
	}
	if r := e.Do(op, "PUT", "/api/orgs/"+orgID+"/notes/x.md", map[string]any{"content": "x"}); r.Status != 404 {
		t.Errorf("outsider put: %d", r.Status)
	}
	if r := e.Admin("DELETE", "/api/orgs/"+orgID+"/notes/plan.md", nil); r.Status != 204 {
		t.Fatalf("delete: %d", r.Status)
	}
	if r := e.Admin("GET", "/api/orgs/"+orgID+"/notes/plan.md", nil); r.Status != 404 {
		t.Fatalf("after delete: %d", r.Status)
	}
}

func TestMemoryAPI(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	_, _, agentID := e.Hierarchy()
	base := "/api/agents/" + agentID + "/memory"
	if r := e.Admin("GET", base, nil); r.Status != 200 || r.Map()["content"] != "" || r.Map()["updated_at"] != nil {
		t.Fatalf("empty memory: %d %s", r.Status, r.Body)
	}
	for i := range 3 {
		if r := e.Admin("PUT", base, map[string]any{"content": fmt.Sprintf("v%d", i)}); r.Status != 200 {
			t.Fatalf("put: %d %s", r.Status, r.Body)
		}
	}
	if r := e.Admin("PUT", base, map[string]any{"content": strings.Repeat("x", 12001)}); r.Status != 422 {
		t.Fatalf("too long: %d", r.Status)
	}
	if r := e.Admin("GET", base, nil); r.Map()["content"] != "v2" {
		t.Fatalf("memory: %s", r.Body)
	}
	var revs []map[string]any
	e.Admin("GET", base+"/revisions", nil).JSON(&revs)
	if len(revs) != 2 || revs[0]["content"] != "v1" || revs[1]["content"] != "v0" {
		t.Fatalf("revisions: %v", revs)
	}
	var other map[string]any
	e.Admin("POST", "/api/orgs", map[string]any{"name": "Other"}).JSON(&other)
	op := e.Operator(other["id"].(string))
	if r := e.Do(op, "GET", base+"/revisions", nil); r.Status != 404 {
		t.Fatalf("outsider: %d", r.Status)
	}
}
