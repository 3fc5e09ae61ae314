package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/native/issues"
	"github.com/guilds/guilds/internal/secret"
)

func withKeyring(t *testing.T, env map[string]string) apitest.Options {
	entry, err := secret.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	return apitest.Options{Env: env, Tweak: func(d *api.Deps) {
		d.Models = &models.Resolver{Integrations: d.Integrations, Keyring: kr}
	}}
}

func TestModelKeys(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, withKeyring(t, map[string]string{"DEEPINFRA_API_KEY": "box-deepinfra-key"}))
	org, _, _ := e.Hierarchy()
	op := e.Operator(org)
	other := e.Operator("")

	r := e.Do(op, "GET", "/api/orgs/"+org+"/model-providers", nil)
	var provs []models.ProviderStatus
	r.JSON(&provs)
	if r.Status != 200 || len(provs) != 2 || provs[0].HasKey || provs[0].Label != "no key yet" || !provs[1].BoxKey {
		t.Fatalf("providers = %d %s", r.Status, r.Body)
	}

	const orgKey = "sk-or-org-key-abcdef123456"
	if r := e.Do(op, "PUT", "/api/orgs/"+org+"/model-keys/openrouter", map[string]string{"key": orgKey}); r.Status != 204 {
		t.Fatalf("put = %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "PUT", "/api/orgs/"+org+"/model-keys/acme", map[string]string{"key": "x"}); r.Status != 422 {
		t.Fatalf("unknown provider = %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "PUT", "/api/orgs/"+org+"/model-keys/openrouter", map[string]string{"key": ""}); r.Status != 422 {
		t.Fatalf("empty key = %d %s", r.Status, r.Body)
	}
	if r := e.Do(other, "PUT", "/api/orgs/"+org+"/model-keys/openrouter", map[string]string{"key": "x"}); r.Status != 404 {
		t.Fatalf("outsider = %d", r.Status)
	}
	r = e.Do(op, "GET", "/api/orgs/"+org+"/model-keys", nil)
	if r.Status != 200 || strings.Contains(string(r.Body), orgKey) || !strings.Contains(string(r.Body), `{"provider":"openrouter","set":true}`) {
		t.Fatalf("keys = %d %s", r.Status, r.Body)
	}
	var stored []byte
	if err := e.DB.QueryRow(context.Background(), `SELECT ciphertext FROM organisation_model_keys`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(stored), orgKey) {
		t.Fatal("the key is stored in clear")
	}
	r = e.Do(op, "GET", "/api/orgs/"+org+"/model-providers", nil)
	provs = nil
	r.JSON(&provs)
	if !provs[0].OrgKey || !provs[0].HasKey || provs[0].Label != "" {
		t.Fatalf("after put: %s", r.Body)
	}
	if r := e.Do(op, "DELETE", "/api/orgs/"+org+"/model-keys/openrouter", nil); r.Status != 204 {
		t.Fatalf("delete = %d", r.Status)
	}
	if r := e.Do(op, "DELETE", "/api/orgs/"+org+"/model-keys/openrouter", nil); r.Status != 404 {
		t.Fatalf("delete again = %d", r.Status)
	}
}

func TestStartRunWithoutAnyKeyIs422(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	_, _, agent := e.Hierarchy()
	r := e.Admin("POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "hello"})
	if r.Status != 422 || r.ErrorCode() != "no_model_key" {
		t.Fatalf("start = %d %s", r.Status, r.Body)
	}
	if e.Count("runs") != 0 {
		t.Fatal("a refused start stored a run")
	}
	if r := e.Admin("POST", "/api/agents/"+agent+"/runs", `{"message": 3}`); r.Status != 400 {
		t.Fatalf("bad body = %d", r.Status)
	}
	if r := e.Admin("GET", "/api/runs/00000000-0000-0000-0000-000000000000", nil); r.Status != 404 {
		t.Fatalf("missing run = %d", r.Status)
	}
	if r := e.Admin("GET", "/api/agents/"+agent+"/runs", nil); r.Status != 200 || string(r.Body) != "[]" {
		t.Fatalf("list = %d %s", r.Status, r.Body)
	}
}

func TestIssues(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	org, guild, agent := e.Hierarchy()
	op := e.Operator(org)
	other := e.Operator("")
	ctx := context.Background()
	var ids []string
	for _, s := range []string{"first", "second"} {
		iss, err := issues.File(ctx, e.DB, issues.New{GuildID: guild, AgentID: agent, Kind: "api", Summary: s})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, iss.ID)
	}
	if _, err := issues.File(ctx, e.DB, issues.New{GuildID: guild, Kind: "bogus", Summary: ""}); err == nil {
		t.Fatal("a bad issue was filed")
	}
	var list []issues.Issue
	r := e.Do(op, "GET", "/api/guilds/"+guild+"/issues?status=open", nil)
	r.JSON(&list)
	if r.Status != 200 || len(list) != 2 {
		t.Fatalf("list = %d %s", r.Status, r.Body)
	}
	if r := e.Do(other, "GET", "/api/guilds/"+guild+"/issues", nil); r.Status != 404 {
		t.Fatalf("outsider list = %d", r.Status)
	}
	if r := e.Do(other, "POST", "/api/issues/"+ids[0]+"/resolve", nil); r.Status != 404 {
		t.Fatalf("outsider resolve = %d", r.Status)
	}
	r = e.Do(op, "POST", "/api/issues/"+ids[0]+"/resolve", nil)
	if r.Status != 200 || r.Map()["status"] != "resolved" {
		t.Fatalf("resolve = %d %s", r.Status, r.Body)
	}
	r = e.Do(op, "POST", "/api/guilds/"+guild+"/issues/resolve-all", nil)
	if r.Status != 200 || r.Map()["resolved"] != float64(1) {
		t.Fatalf("resolve-all = %d %s", r.Status, r.Body)
	}
	r = e.Do(op, "GET", "/api/guilds/"+guild+"/issues?status=open", nil)
	if string(r.Body) != "[]" {
		t.Fatalf("open after resolve-all: %s", r.Body)
	}
	if r := e.Do(op, "GET", "/api/guilds/"+guild+"/issues?status=weird", nil); r.Status != 422 {
		t.Fatalf("bad status = %d", r.Status)
	}
}

// The "no model key" warning is for an operator none of whose runs can
// start: the box holds no key and neither does any of their organisations.
// An instance admin sees it while no organisation holds one.
func TestNoModelKeyWarningFollowsTheOperatorsOrganisations(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, withKeyring(t, nil))
	org, _, _ := e.Hierarchy()
	op, other := e.Operator(org), e.Operator("")
	warned := func(tok string) bool {
		t.Helper()
		var inst struct {
			NoModelKey bool `json:"no_model_key"`
		}
		r := e.Do(tok, "GET", "/api/instance", nil)
		if r.Status != 200 {
			t.Fatalf("instance: %d %s", r.Status, r.Body)
		}
		r.JSON(&inst)
		return inst.NoModelKey
	}
	if !warned(op) || !warned(e.AdminToken) {
		t.Fatal("no key anywhere: everyone should be warned")
	}
	if r := e.Do(op, "PUT", "/api/orgs/"+org+"/model-keys/openrouter", map[string]string{"key": "sk-or-org-key-abcdef123456"}); r.Status != 204 {
		t.Fatalf("put = %d %s", r.Status, r.Body)
	}
	if warned(op) || warned(e.AdminToken) {
		t.Fatal("the organisation holds a key, yet its operator (or the admin) is told runs cannot start")
	}
	if !warned(other) {
		t.Fatal("an operator whose organisation holds no key is not warned")
	}
}
