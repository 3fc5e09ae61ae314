package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/native/scripts"
	"github.com/guilds/guilds/internal/orgs"
)

func TestScriptsAPI(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	_, _, agentID := e.Hierarchy()
	ctx := context.Background()
	agent, err := orgs.LoadAgent(ctx, e.DB, agentID)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []scripts.Input{
		{Name: "rates", Description: "fetch rates", Source: "print(1)\n", Parameters: []byte(`{"type":"object","properties":{"pair":{"type":"string"}}}`)},
		{Name: "alpha", Description: "first", Source: "print(2)\n"},
	} {
		if err := in.Check(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := scripts.Create(ctx, e.DB, agent, in, nil); err != nil {
			t.Fatal(err)
		}
	}
	base := "/api/agents/" + agentID + "/scripts"
	var list []map[string]any
	if r := e.Admin("GET", base, nil); r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	} else {
		r.JSON(&list)
	}
	if len(list) != 2 || list[0]["name"] != "alpha" || list[1]["name"] != "rates" || list[1]["source"] != nil || list[1]["parameters"] == nil ||
		list[0]["description"] != "first" || list[0]["hash"] != scripts.Hash("print(2)\n") {
		t.Fatalf("list: %v", list)
	}
	if r := e.Admin("GET", base+"/rates", nil); r.Status != 200 || r.Map()["source"] != "print(1)\n" || r.Map()["size"] != float64(9) {
		t.Fatalf("get: %d %s", r.Status, r.Body)
	}
	for path, want := range map[string]int{base + "/Bad": 422, base + "/manifest": 422, base + "/missing": 404} {
		r := e.Admin("GET", path, nil)
		if r.Status != want {
			t.Errorf("GET %s: %d, want %d (%s)", path, r.Status, want, r.Body)
		}
		if want == 422 && !strings.Contains(string(r.Body), `"field":"name"`) {
			t.Errorf("GET %s: the 422 names no field: %s", path, r.Body)
		}
	}
	var other map[string]any
	e.Admin("POST", "/api/orgs", map[string]any{"name": "Other"}).JSON(&other)
	op := e.Operator(other["id"].(string))
	for _, m := range []string{"GET", "DELETE"} {
		if r := e.Do(op, m, base+"/rates", nil); r.Status != 404 {
			t.Errorf("outsider %s: %d", m, r.Status)
		}
	}
	if r := e.Admin("DELETE", base+"/rates", nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("DELETE", base+"/rates", nil); r.Status != 404 {
		t.Fatalf("delete again: %d", r.Status)
	}
	if n := e.Count("artifacts"); n != 1 {
		t.Fatalf("%d artifacts left", n)
	}
}
