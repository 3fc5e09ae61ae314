package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/secret"
)

// An organisation model key sealed under a key dropped from
// GUILDS_ENCRYPTION_KEY: starting a run answers 503 key_unavailable naming
// the key id and the remedy, never a 500, and stores no run.
func TestRunStartWithDroppedKeyIs503(t *testing.T) {
	t.Parallel()
	k1, _ := secret.GenerateKey("k1")
	old, _ := secret.ParseKeyring(k1)
	k2, _ := secret.GenerateKey("k2")
	only, _ := secret.ParseKeyring(k2)
	e := apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) {
		d.Models = &models.Resolver{Integrations: d.Integrations, Keyring: only}
	}})
	org, _, agent := e.Hierarchy()
	if err := models.SetOrgKey(context.Background(), e.DB, old, org, "openrouter", "sk-or-org-key-abcdef123456"); err != nil {
		t.Fatal(err)
	}
	r := e.Admin("POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "hello"})
	if r.Status != 503 || r.ErrorCode() != "key_unavailable" || !strings.Contains(string(r.Body), `k1`) ||
		!strings.Contains(string(r.Body), "guilds keys rotate") {
		t.Fatalf("start = %d %s", r.Status, r.Body)
	}
	if e.Count("runs") != 0 {
		t.Fatal("a refused start stored a run")
	}
}
