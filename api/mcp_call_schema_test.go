package api_test

import (
	"context"
	"strings"
	"testing"
)

// The Test call takes a run's path: a listed schema the validator cannot
// compile refuses the call (422 naming the tool) as a run's call is refused,
// instead of sending arguments nothing checked.
func TestMCPCallRefusesASchemaThatDoesNotCompile(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	addServer(t, me.DB, "etherscan", keyServer(t, "Authorization", "Bearer eth-good-key"), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": "eth-good-key"})
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	id := r.Map()["connection"].(map[string]any)["id"].(string)
	if _, err := me.DB.Exec(context.Background(), `UPDATE mcp_tools SET input_schema = '{"type":12}' WHERE connection_id = $1 AND remote_name = 'echo'`, id); err != nil {
		t.Fatal(err)
	}
	st, m := me.call(t, id, "echo", `{"text":"sent?"}`)
	e, _ := m["error"].(map[string]any)
	if msg, _ := e["message"].(string); st != 422 || e["code"] != "invalid" || !strings.Contains(msg, "tool: ") || !strings.Contains(msg, "does not compile") {
		t.Fatalf("uncompilable schema: %d %v", st, m)
	}
}
