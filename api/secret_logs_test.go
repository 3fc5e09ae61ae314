package api_test

import (
	"slices"
	"testing"
)

// A secret that leaves agents' redaction sets (a grant revoked, the value
// replaced, the secret deleted) has those agents' persistent shell logs
// dropped by the workers; agents that keep it are left alone.
func TestSecretLeavingTheRedactionSetDropsShellLogs(t *testing.T) {
	t.Parallel()
	ch := orders(t)
	e := secretsEnv(t, true)
	_, guild, revoked := e.Hierarchy()
	r := e.Admin("POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Keeps it"})
	if r.Status != 201 {
		t.Fatalf("agent: %d %s", r.Status, r.Body)
	}
	kept := r.Map()["id"].(string)
	base := "/api/guilds/" + guild + "/secrets/VENDOR_KEY"
	steps := []struct {
		method, path string
		body         map[string]any
	}{
		{"PUT", base, map[string]any{"value": "sk-first-value-0001"}},
		{"PUT", base + "/grants", map[string]any{"scope": "guild", "scope_id": guild, "enabled": true}},
	}
	for _, s := range steps {
		if r := e.Admin(s.method, s.path, s.body); r.Status >= 300 {
			t.Fatalf("%s %s: %d %s", s.method, s.path, r.Status, r.Body)
		}
	}

	if r := e.Admin("PUT", base+"/grants", map[string]any{"scope": "agent", "scope_id": revoked, "enabled": false}); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if o := nextOrderFor(t, ch, revoked); !o.DropShellLogs || o.RemoveHome || slices.Contains(o.Agents, kept) {
		t.Fatalf("revoking for one agent: %+v", o)
	}
	if r := e.Admin("PUT", base, map[string]any{"value": "sk-second-value-0002"}); r.Status != 200 {
		t.Fatalf("replace: %d %s", r.Status, r.Body)
	}
	if o := nextOrderFor(t, ch, kept); !o.DropShellLogs || slices.Contains(o.Agents, revoked) {
		t.Fatalf("replacing the value: %+v", o)
	}
	if r := e.Admin("DELETE", base, nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if o := nextOrderFor(t, ch, kept); !o.DropShellLogs {
		t.Fatalf("deleting the secret: %+v", o)
	}
}
