package api_test

import (
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
)

func TestCollectionsAndRecordsAPI(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	orgID, guildID, agentID := e.Hierarchy()
	base := "/api/orgs/" + orgID + "/collections"

	// Definition problems are all reported at once.
	r := e.Admin("POST", base, map[string]any{"name": "Leads!", "columns": []map[string]any{
		{"name": "id", "type": "text"}, {"name": "x", "type": "blob"}, {"name": "s", "type": "enum"},
		{"name": "a", "type": "text", "unique": true}, {"name": "b", "type": "number", "unique": true}}})
	if r.Status != 422 || !strings.Contains(string(r.Body), "at most one column may be unique") || !strings.Contains(string(r.Body), `\"id\" is reserved`) {
		t.Fatalf("bad definition: %d %s", r.Status, r.Body)
	}
	if n := e.Count("collections"); n != 0 {
		t.Fatalf("rejected definition stored %d", n)
	}
	r = e.Admin("POST", base, map[string]any{"name": "leads", "columns": []map[string]any{
		{"name": "name", "type": "text", "required": true}, {"name": "email", "type": "text", "unique": true},
		{"name": "stage", "type": "enum", "values": []string{"new", "won"}}}})
	if r.Status != 201 {
		t.Fatalf("create: %d %s", r.Status, r.Body)
	}
	cid := r.Map()["id"].(string)
	if r := e.Admin("POST", base, map[string]any{"name": "leads", "columns": []map[string]any{{"name": "n", "type": "text"}}}); r.Status != 409 {
		t.Fatalf("duplicate name: %d", r.Status)
	}

	// Records through the operator API.
	r = e.Admin("POST", "/api/collections/"+cid+"/records", map[string]any{"name": "Ada", "email": "ada@x.io", "stage": "new"})
	if r.Status != 201 {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	rid := r.Map()["id"].(string)
	if r := e.Admin("POST", "/api/collections/"+cid+"/records", map[string]any{"stage": "lost", "extra": 1}); r.Status != 422 ||
		!strings.Contains(string(r.Body), "record rejected") || !strings.Contains(string(r.Body), "name: required") {
		t.Fatalf("rejected add: %d %s", r.Status, r.Body)
	} else {
		// Every refused column is also listed with its field.
		var body struct {
			Error struct {
				Problems []struct{ Field, Message string }
			}
		}
		r.JSON(&body)
		fields := map[string]bool{}
		for _, p := range body.Error.Problems {
			fields[p.Field] = true
		}
		if !fields["name"] || !fields["stage"] || !fields["extra"] || len(fields) != 3 {
			t.Fatalf("problems of the rejected add: %s", r.Body)
		}
	}
	if r := e.Admin("POST", "/api/collections/"+cid+"/records", map[string]any{"name": "Ada L.", "email": "ADA@x.io"}); r.Status != 200 || r.Map()["id"] != rid {
		t.Fatalf("merge: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("PATCH", "/api/collections/"+cid+"/records/"+rid, map[string]any{"stage": nil}); r.Status != 200 {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
	var list struct {
		Total   int
		Records []map[string]any
	}
	e.Admin("GET", "/api/collections/"+cid+"/records?limit=5", nil).JSON(&list)
	if list.Total != 1 || list.Records[0]["values"].(map[string]any)["name"] != "Ada L." {
		t.Fatalf("list: %+v", list)
	}
	e.Admin("GET", "/api/collections/"+cid+"/records?q=ada", nil).JSON(&list)
	if list.Total != 1 {
		t.Fatalf("search: %+v", list)
	}
	if r := e.Admin("GET", "/api/collections/"+cid+"/records?limit=x", nil); r.Status != 422 {
		t.Fatalf("bad limit: %d", r.Status)
	}
	// The tools' where and order, as query parameters.
	e.Admin("POST", "/api/collections/"+cid+"/records", map[string]any{"name": "Bob", "stage": "won"})
	e.Admin("GET", "/api/collections/"+cid+`/records?where={"stage":"won"}&order=name&direction=desc`, nil).JSON(&list)
	if list.Total != 1 || list.Records[0]["values"].(map[string]any)["name"] != "Bob" {
		t.Fatalf("where: %+v", list)
	}
	if r := e.Admin("GET", "/api/collections/"+cid+`/records?where={"stage":"maybe"}`, nil); r.Status != 422 || !strings.Contains(string(r.Body), "stage: must be one of") {
		t.Fatalf("bad where term: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("GET", "/api/collections/"+cid+`/records?where=stage`, nil); r.Status != 422 || !strings.Contains(string(r.Body), "where") {
		t.Fatalf("where not JSON: %d %s", r.Status, r.Body)
	}
	e.Admin("GET", "/api/collections/"+cid+"/records?order=name", nil).JSON(&list)
	if list.Total != 2 || list.Records[0]["values"].(map[string]any)["name"] != "Ada L." {
		t.Fatalf("order: %+v", list)
	}
	bob := list.Records[1]["id"].(string)
	if r := e.Admin("DELETE", "/api/collections/"+cid+"/records/"+bob, nil); r.Status != 204 {
		t.Fatalf("remove bob: %d", r.Status)
	}

	// Altering: a new required column the stored record lacks is refused, and nothing changes.
	r = e.Admin("PATCH", "/api/collections/"+cid, map[string]any{"columns": []map[string]any{
		{"name": "name", "type": "text", "required": true}, {"name": "phone", "type": "text", "required": true}}})
	if r.Status != 422 || !strings.Contains(string(r.Body), `required column \"phone\"`) {
		t.Fatalf("alter refused: %d %s", r.Status, r.Body)
	}
	// Dropping a column removes its values.
	r = e.Admin("PATCH", "/api/collections/"+cid, map[string]any{"columns": []map[string]any{{"name": "name", "type": "text", "required": true}}})
	if r.Status != 200 {
		t.Fatalf("alter: %d %s", r.Status, r.Body)
	}
	rec := e.Admin("GET", "/api/collections/"+cid+"/records/"+rid, nil).Map()
	if v := rec["values"].(map[string]any); len(v) != 1 || v["name"] != "Ada L." {
		t.Fatalf("after alter: %v", rec)
	}

	// Grants.
	if r := e.Admin("PUT", "/api/collections/"+cid+"/grants", map[string]any{"guild_id": guildID, "access": "read"}); r.Status != 200 {
		t.Fatalf("grant: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("PUT", "/api/collections/"+cid+"/grants", map[string]any{"agent_id": agentID, "access": "none"}); r.Status != 200 {
		t.Fatalf("agent grant: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("PUT", "/api/collections/"+cid+"/grants", map[string]any{"access": "all"}); r.Status != 422 {
		t.Fatalf("bad grant: %d %s", r.Status, r.Body)
	}
	var grants []map[string]any
	e.Admin("GET", "/api/collections/"+cid+"/grants", nil).JSON(&grants)
	if len(grants) != 2 {
		t.Fatalf("grants %v", grants)
	}
	if r := e.Admin("DELETE", "/api/collections/"+cid+"/grants/"+agentID, nil); r.Status != 204 {
		t.Fatalf("delete grant: %d", r.Status)
	}

	// Another organisation's operator sees none of it.
	var other map[string]any
	e.Admin("POST", "/api/orgs", map[string]any{"name": "Other"}).JSON(&other)
	op := e.Operator(other["id"].(string))
	for _, path := range []string{base, "/api/collections/" + cid, "/api/collections/" + cid + "/records",
		"/api/collections/" + cid + "/records/" + rid, "/api/collections/" + cid + "/grants"} {
		if r := e.Do(op, "GET", path, nil); r.Status != 404 {
			t.Errorf("GET %s as outsider: %d", path, r.Status)
		}
	}
	if r := e.Do(op, "POST", "/api/collections/"+cid+"/records", map[string]any{"name": "x"}); r.Status != 404 {
		t.Errorf("outsider add: %d", r.Status)
	}

	if r := e.Admin("DELETE", "/api/collections/"+cid+"/records/"+rid, nil); r.Status != 204 {
		t.Fatalf("remove: %d", r.Status)
	}
	if r := e.Admin("DELETE", "/api/collections/"+cid+"/records/"+rid, nil); r.Status != 404 {
		t.Fatalf("remove twice: %d", r.Status)
	}
	if r := e.Admin("DELETE", "/api/collections/"+cid, nil); r.Status != 204 || e.Count("records") != 0 {
		t.Fatalf("delete collection: %d", r.Status)
	}
}
