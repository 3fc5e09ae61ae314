package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/apitest"
)

// newOperator creates an operator of org through the API and returns its user id and token.
func newOperator(t *testing.T, e *apitest.Env, org, name string) (id, token string) {
	t.Helper()
	r := e.Admin("POST", "/api/users", map[string]any{"name": name, "organisation_id": org})
	if r.Status != 201 {
		t.Fatalf("create %s: %d %s", name, r.Status, r.Body)
	}
	m := r.Map()
	return m["user"].(map[string]any)["id"].(string), m["token"].(string)
}

// openRequest records a secret request in a direct run started by startedBy.
func openRequest(t *testing.T, e *apitest.Env, org, guild, agent, startedBy, name string, seq int) agentsecrets.Request {
	t.Helper()
	ctx := context.Background()
	var runID string
	if err := e.DB.QueryRow(ctx, `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, budget, remaining, started_by)
		VALUES ($1, $2, $3, 'direct', 5, 5, $4) RETURNING id`, agent, guild, org, startedBy).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	req, err := agentsecrets.OpenRequest(ctx, e.DB, agentsecrets.NewRequest{RunID: runID, AgentID: agent, OrgID: org, Seq: seq,
		Name: name, Reason: "to call the vendor"})
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestSecretRequestIsAnsweredByWhoAsked: a request is answered by the user
// who started the run it came from, or an instance admin; another operator
// of the organisation gets a 403 and nothing is stored.
func TestSecretRequestIsAnsweredByWhoAsked(t *testing.T) {
	e := secretsEnv(t, true)
	org, guild, agent := e.Hierarchy()
	alice, aliceTok := newOperator(t, e, org, "alice")
	_, bobTok := newOperator(t, e, org, "bob")

	req := openRequest(t, e, org, guild, agent, alice, "VENDOR_TOKEN", 2)
	if req.AskedOf != alice {
		t.Fatalf("request names %q, want alice %q", req.AskedOf, alice)
	}
	if r := e.Do(bobTok, "POST", "/api/secret-requests/"+req.ID, map[string]any{"value": "vendor-token-from-bob"}); r.Status != 403 || r.ErrorCode() != "not_asked" {
		t.Fatalf("bob answers alice's request: %d %s", r.Status, r.Body)
	}
	if r := e.Do(bobTok, "POST", "/api/secret-requests/"+req.ID, map[string]any{"decline": true}); r.Status != 403 {
		t.Fatalf("bob declines alice's request: %d %s", r.Status, r.Body)
	}
	if e.Count("agent_secrets") != 0 {
		t.Fatal("a refused answer stored a secret")
	}
	if r := e.Do(aliceTok, "POST", "/api/secret-requests/"+req.ID, map[string]any{"value": "vendor-token-from-alice"}); r.Status != 200 {
		t.Fatalf("alice answers: %d %s", r.Status, r.Body)
	}
	other := openRequest(t, e, org, guild, agent, alice, "OTHER_TOKEN", 3)
	if r := e.Admin("POST", "/api/secret-requests/"+other.ID, map[string]any{"decline": true}); r.Status != 200 {
		t.Fatalf("an instance admin answers: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("GET", "/api/agents/"+agent+"/secrets", nil); !strings.Contains(string(r.Body), `"name":"VENDOR_TOKEN"`) {
		t.Fatalf("agent secrets: %s", r.Body)
	}
}

// TestAnswerNeverOverwritesAnOperatorSecret: an answer to a request whose
// name an operator has set meanwhile is refused (409), and the operator's
// secret keeps its value.
func TestAnswerNeverOverwritesAnOperatorSecret(t *testing.T) {
	e := secretsEnv(t, true)
	org, guild, agent := e.Hierarchy()
	alice, aliceTok := newOperator(t, e, org, "alice")
	req := openRequest(t, e, org, guild, agent, alice, "VENDOR_TOKEN", 2)
	if r := e.Admin("PUT", "/api/orgs/"+org+"/secrets/VENDOR_TOKEN", map[string]any{"value": "operator-set-value-1"}); r.Status/100 != 2 {
		t.Fatalf("operator sets the secret: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("PUT", "/api/agents/"+agent+"/secrets/VENDOR_TOKEN", map[string]any{"value": "operator-set-value-2"}); r.Status/100 != 2 {
		t.Fatalf("operator sets the agent's secret: %d %s", r.Status, r.Body)
	}
	r := e.Do(aliceTok, "POST", "/api/secret-requests/"+req.ID, map[string]any{"value": "answer-value-3"})
	if r.Status != 409 || r.ErrorCode() != "secret_set_by_operator" || !strings.Contains(string(r.Body), "VENDOR_TOKEN") {
		t.Fatalf("answer over an operator's secret: %d %s", r.Status, r.Body)
	}
	var n int
	if err := e.DB.QueryRow(context.Background(), `SELECT count(*) FROM agent_secret_audit WHERE action = 'replace'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("the operator's secret was replaced (%d, %v)", n, err)
	}
}
