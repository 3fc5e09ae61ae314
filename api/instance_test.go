package api_test

import (
	"encoding/json"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
)

func TestInstanceReportsIntegrationsWithoutValues(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{Env: map[string]string{
		"TAVILY_API_KEY": "tvly-very-secret-value", "GITHUB_APP_ID": "42",
	}})
	r := e.Admin("GET", "/api/instance", nil)
	if r.Status != 200 {
		t.Fatal(r.Status)
	}
	if strings.Contains(string(r.Body), "tvly-very-secret-value") {
		t.Fatal("an integration value leaked into /api/instance")
	}
	var inst struct {
		AuthMode     string `json:"auth_mode"`
		NoModelKey   bool   `json:"no_model_key"`
		Integrations []struct {
			Name      string `json:"name"`
			State     string `json:"state"`
			Variables []struct {
				Name string `json:"name"`
				Set  bool   `json:"set"`
			} `json:"variables"`
			Switches struct {
				NativeTools []string `json:"native_tools"`
			} `json:"switches_on"`
		} `json:"integrations"`
	}
	r.JSON(&inst)
	if inst.AuthMode != "token" || !inst.NoModelKey || len(inst.Integrations) != 7 {
		t.Fatalf("%+v", inst)
	}
	states := map[string]string{}
	for _, in := range inst.Integrations {
		states[in.Name] = in.State
		if in.Name == "web-search" && (len(in.Switches.NativeTools) != 1 || !in.Variables[0].Set) {
			t.Errorf("web-search %+v", in)
		}
	}
	if states["web-search"] != "on" || states["github-app"] != "incomplete" || states["openrouter"] != "off" {
		t.Errorf("states %v", states)
	}
	// Any authenticated user may read it.
	if r := e.Do(e.Operator(""), "GET", "/api/instance", nil); r.Status != 200 {
		t.Errorf("operator: %d", r.Status)
	}
}

// TestOpenAPIMatchesRoutes keeps the OpenAPI document in step with the router.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	r := e.Do("", "GET", "/api/openapi.json", nil)
	if r.Status != 200 {
		t.Fatal(r.Status)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	r.JSON(&doc)
	documented := map[string]bool{}
	for p, ops := range doc.Paths {
		for m := range ops {
			documented[strings.ToUpper(m)+" "+p] = true
		}
	}
	// Probe every documented operation: the router must know it (no 404 "no such route", no 405).
	var missing []string
	for op := range documented {
		method, path, _ := strings.Cut(op, " ")
		path = strings.NewReplacer("{id}", "00000000-0000-0000-0000-000000000000", "{user_id}", "00000000-0000-0000-0000-000000000000").Replace(path)
		for strings.Contains(path, "{") {
			i := strings.Index(path, "{")
			j := strings.Index(path, "}")
			path = path[:i] + "x" + path[j+1:]
		}
		resp := e.Admin(method, path, nil)
		if resp.Status == http.StatusMethodNotAllowed || (resp.Status == 404 && strings.Contains(string(resp.Body), "no such route")) {
			missing = append(missing, op)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("documented but not routed: %v", missing)
	}
	for _, want := range []string{"GET /api/orgs", "POST /api/orgs", "GET /api/orgs/{id}", "GET /api/orgs/{id}/guilds",
		"GET /api/guilds/{id}", "GET /api/guilds/{id}/agents", "GET /api/agents/{id}", "GET /api/instance"} {
		if !documented[want] {
			t.Errorf("%s is not documented", want)
		}
	}
	if got, want := len(documented), len(e.Server.Routes()); got != want {
		t.Errorf("document has %d operations, router %d", got, want)
	}
}
