package e2e

import (
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
)

// TestDeployedKeyRotation rotates the encryption key as the README says —
// the new key first, `guilds keys rotate`, then the old key dropped — and an
// agent's run still reaches its organisation's model key and its OAuth login.
func TestDeployedKeyRotation(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes")
	}
	const orgModelKey = "sk-or-organisation-key-0123456789"
	as := oauthtest.New(t)
	rs := as.Protect(t, "/mcp", server.NewStreamableHTTPServer(acmeServer(), server.WithStateful(true)), nil)
	// Only the organisation's key is accepted: no box key is set.
	model := newScriptedModel(t, orgModelKey,
		[]toolCall{{"acme_echo", map[string]any{"text": "after rotation"}}},
		nil)
	d := deploy(t, map[string]string{"GUILDS_OPENROUTER_BASE_URL": model.URL})
	oldKey := d.vars["GUILDS_ENCRYPTION_KEY"]

	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Ops"})["id"].(string)
	agent := d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Scribe"})["id"].(string)
	if r := d.Call("PUT", "/api/orgs/"+org+"/model-keys/openrouter", map[string]any{"key": orgModelKey}); r.Status/100 != 2 {
		t.Fatalf("org model key: %d %s", r.Status, r.Body)
	}
	connectAcme(t, d, rs.URL+"/mcp", org)

	// The new key goes first; rotation re-seals every value under it.
	d.stop("serve")
	d.stop("worker")
	d.vars["GUILDS_ENCRYPTION_KEY"] = "k2:" + d.newKey() + "," + oldKey
	out, err := d.command("keys", "rotate").CombinedOutput()
	if err != nil {
		t.Fatalf("guilds keys rotate: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "model") {
		t.Errorf("the rotation report names no model-key table:\n%s", out)
	}
	// The old key is dropped.
	d.restart(map[string]string{"GUILDS_ENCRYPTION_KEY": strings.Split(d.vars["GUILDS_ENCRYPTION_KEY"], ",")[0]})

	run := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Ask Acme."})
	transcript := d.waitRun(run["id"].(string))
	if !strings.Contains(transcript, "echo: after rotation") {
		t.Fatalf("the run did not reach its login after rotation:\n%s", transcript)
	}
	if logs := d.Logs(); strings.Contains(logs, "lacks") {
		t.Errorf("start-up warns of a missing key after a complete rotation:\n%s", logs)
	}
}
