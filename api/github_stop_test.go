package api_test

import (
	"testing"
)

// Disconnecting a GitHub login (deleting it) stops the sandboxes of the
// agents under its owner; the homes are kept.
func TestGitHubDisconnectStopsTheAgentsSandboxes(t *testing.T) {
	ch := orders(t)
	e := newGitHubEnv(t, true)
	_, guild, agent := e.Hierarchy()
	id, _ := e.connect(t, e.browser, "guild", guild)
	if r := e.Admin("DELETE", "/api/mcp/connections/"+id, nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if o := nextOrderFor(t, ch, agent); o.RemoveHome || o.DropShellLogs {
		t.Fatalf("GitHub disconnect: %+v", o)
	}
}
