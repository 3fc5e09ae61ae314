package api_test

import (
	"strings"
	"testing"
)

// The Test call checks the arguments against the tool's listed schema, as a
// run does, and answers a 422 naming the problem instead of sending them.
func TestMCPCallChecksArgumentsAgainstTheSchema(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	addServer(t, me.DB, "etherscan", keyServer(t, "Authorization", "Bearer eth-good"), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": "eth-good"})
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	id := r.Map()["connection"].(map[string]any)["id"].(string)
	for _, args := range []string{`{"text":5}`, `{}`, `null`} {
		st, m := me.call(t, id, "echo", args)
		e, _ := m["error"].(map[string]any)
		if st != 422 || e["code"] != "invalid" || !strings.Contains(e["message"].(string), "arguments: ") || !strings.Contains(e["message"].(string), "text") {
			t.Errorf("%s: %d %v", args, st, m)
		}
	}
	if st, m := me.call(t, id, "echo", `{"text":"fine"}`); st != 200 || m["result"] != "echo: fine" {
		t.Errorf("valid call: %d %v", st, m)
	}
}
