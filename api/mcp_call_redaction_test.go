package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// When the login's redaction set cannot be loaded, the Test call refuses
// (as a run does) instead of answering a result nothing was redacted from.
func TestMCPCallFailsClosedWithoutARedactionSet(t *testing.T) {
	me := newMCPEnv(t, false, nil)
	org, _, _ := me.Hierarchy()
	addServer(t, me.DB, "etherscan", keyServer(t, "Authorization", "Bearer eth-secret-key"), "token", `{"header":"Authorization","scheme":"Bearer"}`)
	r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "etherscan", "owner_scope": "organisation", "owner_id": org, "key": "eth-secret-key"})
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	id := r.Map()["connection"].(map[string]any)["id"].(string)
	if st, m := me.call(t, id, "echo", `{"text":"warm"}`); st != 200 {
		t.Fatalf("first call: %d %v", st, m)
	}
	// The stored credential is now sealed under a key this box lacks.
	if _, err := me.DB.Exec(context.Background(), `UPDATE connection_credentials SET ciphertext = '\\x00'::bytea WHERE connection_id = $1`, id); err != nil {
		t.Fatal(err)
	}
	me.Engine.Forget(context.Background(), uuid.MustParse(id))
	st, m := me.call(t, id, "echo", `{"text":"key eth-secret-key"}`)
	if res, _ := m["result"].(string); strings.Contains(res, "eth-secret-key") {
		t.Fatalf("the key came back in clear: %d %v", st, m)
	}
	e, _ := m["error"].(map[string]any)
	if st != 503 || e["code"] != "redaction_unavailable" {
		t.Fatalf("call without a redaction set: %d %v", st, m)
	}
}
