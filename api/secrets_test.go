package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/secret"
)

func secretsEnv(t *testing.T, withKey bool) *apitest.Env {
	t.Helper()
	var kr *secret.Keyring
	if withKey {
		entry, err := secret.GenerateKey("k1")
		if err != nil {
			t.Fatal(err)
		}
		if kr, err = secret.ParseKeyring(entry); err != nil {
			t.Fatal(err)
		}
	}
	return apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) { d.Models = &models.Resolver{Integrations: d.Integrations, Keyring: kr} }})
}

// Operators set, list, grant and delete secrets of what they can see; no
// response ever holds a value; another organisation's operator sees
// nothing (404); every change is in the audit.
func TestSecretsAPI(t *testing.T) {
	e := secretsEnv(t, true)
	org, guild, agent := e.Hierarchy()
	op := e.Operator(org)
	stranger := e.Operator("")
	const value = "sk-operator-value-77a1c2"
	var bodies []string
	do := func(tok, method, path string, body any) apitest.Response {
		r := e.Do(tok, method, path, body)
		bodies = append(bodies, string(r.Body))
		return r
	}
	if r := do(op, "PUT", "/api/guilds/"+guild+"/secrets/VENDOR_KEY", map[string]any{"value": value}); r.Status != 201 {
		t.Fatalf("set: %d %s", r.Status, r.Body)
	}
	if r := do(op, "PUT", "/api/guilds/"+guild+"/secrets/VENDOR_KEY", map[string]any{"value": value + "-2"}); r.Status != 200 {
		t.Fatalf("replace: %d %s", r.Status, r.Body)
	}
	for _, path := range []string{"/api/guilds/" + guild + "/secrets", "/api/orgs/" + org + "/secret-audit"} {
		if r := do(stranger, "GET", path, nil); r.Status != 404 {
			t.Errorf("stranger GET %s: %d", path, r.Status)
		}
	}
	if r := do(stranger, "PUT", "/api/guilds/"+guild+"/secrets/OTHER_KEY", map[string]any{"value": value}); r.Status != 404 {
		t.Errorf("stranger PUT: %d", r.Status)
	}
	if r := do(op, "PUT", "/api/guilds/"+guild+"/secrets/VENDOR_KEY/grants", map[string]any{"scope": "agent", "scope_id": agent}); r.Status != 422 || !strings.Contains(string(r.Body), `"field":"enabled"`) {
		t.Errorf("grant without enabled: %d %s", r.Status, r.Body)
	}
	if r := do(op, "PUT", "/api/guilds/"+guild+"/secrets/VENDOR_KEY/grants", map[string]any{"scope": "planet", "scope_id": agent, "enabled": true}); r.Status != 422 || !strings.Contains(string(r.Body), `"field":"scope"`) {
		t.Errorf("bad scope: %d %s", r.Status, r.Body)
	}
	r := do(op, "PUT", "/api/guilds/"+guild+"/secrets/VENDOR_KEY/grants", map[string]any{"scope": "guild", "scope_id": guild, "enabled": true})
	var s agentsecrets.Secret
	r.JSON(&s)
	if r.Status != 200 || len(s.Reaches) != 1 || s.Reaches[0].AgentID != agent || s.SetBy == "" {
		t.Fatalf("grant: %d %s", r.Status, r.Body)
	}
	r = do(op, "PUT", "/api/guilds/"+guild+"/secrets/VENDOR_KEY/grants", map[string]any{"scope": "agent", "scope_id": agent, "enabled": false})
	r.JSON(&s)
	if len(s.Reaches) != 0 || len(s.Grants) != 2 {
		t.Fatalf("agent revoke: %s", r.Body)
	}
	r = do(op, "DELETE", "/api/guilds/"+guild+"/secrets/VENDOR_KEY/grants", map[string]any{"scope": "agent", "scope_id": agent})
	r.JSON(&s)
	if r.Status != 200 || len(s.Reaches) != 1 {
		t.Fatalf("ungrant: %d %s", r.Status, r.Body)
	}
	if r := do(op, "GET", "/api/guilds/"+guild+"/secrets", nil); r.Status != 200 || !strings.Contains(string(r.Body), `"name":"VENDOR_KEY"`) {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	if r := do(op, "DELETE", "/api/guilds/"+guild+"/secrets/VENDOR_KEY", nil); r.Status != 204 {
		t.Fatalf("delete: %d", r.Status)
	}
	if r := do(op, "DELETE", "/api/guilds/"+guild+"/secrets/VENDOR_KEY", nil); r.Status != 404 {
		t.Fatalf("delete again: %d", r.Status)
	}
	r = do(op, "GET", "/api/orgs/"+org+"/secret-audit", nil)
	var audit []agentsecrets.AuditEntry
	r.JSON(&audit)
	var actions []string
	for _, a := range audit {
		actions = append(actions, a.Action)
	}
	if strings.Join(actions, ",") != "delete,ungrant,revoke,grant,replace,set" {
		t.Fatalf("audit actions %v", actions)
	}
	for _, b := range bodies {
		if strings.Contains(b, value) {
			t.Fatalf("a response holds the value: %s", b)
		}
	}
}

// Without an encryption key nothing can be stored: 422 no_encryption_key.
func TestSecretsNeedTheKeyring(t *testing.T) {
	e := secretsEnv(t, false)
	org, _, _ := e.Hierarchy()
	if r := e.Admin("PUT", "/api/orgs/"+org+"/secrets/API_KEY", map[string]any{"value": "long-enough-value"}); r.Status != 422 || r.ErrorCode() != "no_encryption_key" {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	if n := e.Count("agent_secrets"); n != 0 {
		t.Fatalf("%d stored", n)
	}
}

// The run's list and the organisation's inbox show a request; the answer
// stores the value as the agent's secret; a second answer is 409; another
// organisation's operator cannot see or answer it.
func TestSecretRequestAnswers(t *testing.T) {
	e := secretsEnv(t, true)
	org, guild, agent := e.Hierarchy()
	opID, op := newOperator(t, e, org, "op")
	stranger := e.Operator("")
	ctx := context.Background()
	var runID string
	if err := e.DB.QueryRow(ctx, `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, budget, remaining, started_by)
		VALUES ($1, $2, $3, 'direct', 5, 5, $4) RETURNING id`, agent, guild, org, opID).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	req, err := agentsecrets.OpenRequest(ctx, e.DB, agentsecrets.NewRequest{RunID: runID, AgentID: agent, OrgID: org, Seq: 2,
		Name: "VENDOR_TOKEN", Reason: "to call the vendor"})
	if err != nil {
		t.Fatal(err)
	}
	if r := e.Do(op, "GET", "/api/runs/"+runID+"/secret-requests", nil); r.Status != 200 || !strings.Contains(string(r.Body), req.ID) {
		t.Fatalf("run list: %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "GET", "/api/orgs/"+org+"/secret-requests?status=pending", nil); !strings.Contains(string(r.Body), req.ID) {
		t.Fatalf("inbox: %s", r.Body)
	}
	if r := e.Do(op, "GET", "/api/orgs/"+org+"/secret-requests?status=maybe", nil); r.Status != 422 || !strings.Contains(string(r.Body), `"field":"status"`) {
		t.Fatalf("bad status filter: %d %s", r.Status, r.Body)
	}
	const value = "vendor-token-0a1b2c3d4e"
	if r := e.Do(stranger, "POST", "/api/secret-requests/"+req.ID, map[string]any{"value": value}); r.Status != 404 {
		t.Fatalf("stranger: %d", r.Status)
	}
	if r := e.Do(op, "POST", "/api/secret-requests/"+req.ID, map[string]any{"value": value, "decline": true}); r.Status != 422 {
		t.Fatalf("both: %d %s", r.Status, r.Body)
	}
	r := e.Do(op, "POST", "/api/secret-requests/"+req.ID, map[string]any{"value": value})
	if r.Status != 200 || !strings.Contains(string(r.Body), `"status":"provided"`) || strings.Contains(string(r.Body), value) {
		t.Fatalf("answer: %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "POST", "/api/secret-requests/"+req.ID, map[string]any{"decline": true}); r.Status != 409 || r.ErrorCode() != "already_answered" {
		t.Fatalf("second answer: %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "GET", "/api/agents/"+agent+"/secrets", nil); !strings.Contains(string(r.Body), `"name":"VENDOR_TOKEN"`) || strings.Contains(string(r.Body), value) {
		t.Fatalf("agent secrets: %s", r.Body)
	}
	if r := e.Do(op, "GET", "/api/orgs/"+org+"/secret-requests?status=pending", nil); strings.Contains(string(r.Body), req.ID) {
		t.Fatalf("answered request still pending: %s", r.Body)
	}
}
