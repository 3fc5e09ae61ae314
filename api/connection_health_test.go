package api_test

import (
	"context"
	"strings"
	"testing"
)

// TestConnectionHealth: the operator API shows a login's typed health, with
// no credential value, and only to who can see the login.
func TestConnectionHealth(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	addServer(t, me.DB, "etherscan", keyServer(t, "Authorization", "Bearer eth-good"), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": "eth-good"})
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	id := r.Map()["connection"].(map[string]any)["id"].(string)

	r = me.Admin("GET", "/api/mcp/connections/"+id+"/health", nil)
	m := r.Map()
	if r.Status != 200 || m["state"] != "healthy" || m["status"] != "connected" || m["last_success_at"] == nil || m["attempts"] != float64(0) {
		t.Fatalf("healthy: %d %s", r.Status, r.Body)
	}
	if strings.Contains(string(r.Body), "eth-good") {
		t.Fatal("health carries the key")
	}

	// A failing refresh as the engine records it.
	if _, err := me.DB.Exec(context.Background(), `UPDATE connection_credentials SET state = 'refresh_failing', attempts = 2,
next_retry_at = now() + interval '1 minute', last_failure_at = now(), last_error_code = 'http_503' WHERE connection_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	m = me.Admin("GET", "/api/mcp/connections/"+id+"/health", nil).Map()
	if m["state"] != "refresh_failing" || m["attempts"] != float64(2) || m["last_error_code"] != "http_503" || m["next_retry_at"] == nil || m["last_failure_at"] == nil {
		t.Fatalf("refresh failing: %v", m)
	}

	// Another organisation's operator does not see it; an unknown id is 404.
	other := me.Admin("POST", "/api/orgs", map[string]any{"name": "Other", "slug": "other-health"})
	if other.Status != 201 {
		t.Fatalf("org: %d %s", other.Status, other.Body)
	}
	tok := me.Operator(other.Map()["id"].(string))
	if r := me.Do(tok, "GET", "/api/mcp/connections/"+id+"/health", nil); r.Status != 404 {
		t.Fatalf("other org: %d %s", r.Status, r.Body)
	}
	if r := me.Admin("GET", "/api/mcp/connections/00000000-0000-4000-8000-000000000000/health", nil); r.Status != 404 {
		t.Fatalf("unknown: %d %s", r.Status, r.Body)
	}
}
