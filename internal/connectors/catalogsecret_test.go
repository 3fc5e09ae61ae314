package connectors_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/sealed"
	"github.com/guilds/guilds/internal/secret"
)

// Catalog client secrets are sealed bound to their row and client: they
// open only for that slug and client id, and "" removes one.
func TestCatalogSecretsSealed(t *testing.T) {
	kr, _ := secret.ParseKeyring(mustKey())
	cfg := json.RawMessage(`{"provider":"oauth2","oauth":{"client_id":"c","client_secret":"top-secret",
		"registrations":{"https://a/cb":{"client_id":"r","client_secret":"reg-secret"}}}}`)
	sealed, err := connectors.SealCatalogSecrets(kr, "acme", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(sealed), "secret\"") || strings.Contains(string(sealed), "top-secret") || strings.Contains(string(sealed), "reg-secret") {
		t.Fatalf("sealed config holds a secret: %s", sealed)
	}
	opened, err := connectors.OpenCatalogSecrets(kr, "acme", sealed)
	if err != nil || !strings.Contains(string(opened), `"top-secret"`) || !strings.Contains(string(opened), `"reg-secret"`) {
		t.Fatalf("opened = %s, %v", opened, err)
	}
	if _, err := connectors.OpenCatalogSecrets(kr, "other", sealed); err == nil {
		t.Fatal("a sealed secret opened for another row")
	}
	moved := strings.Replace(string(sealed), `"client_id":"c"`, `"client_id":"d"`, 1)
	if _, err := connectors.OpenCatalogSecrets(kr, "acme", json.RawMessage(moved)); err == nil {
		t.Fatal("a sealed secret opened for another client id")
	}
	cleared, err := connectors.SealCatalogSecrets(kr, "acme", json.RawMessage(strings.Replace(string(sealed), `"client_id":"c",`, `"client_id":"c","client_secret":"",`, 1)))
	if err != nil || strings.Count(string(cleared), connectors.SealedSecretKey) != 1 {
		t.Fatalf("clearing the row's secret: %s %v", cleared, err)
	}
}

// Rotation seals catalog secrets still stored in clear and re-seals sealed
// ones, and the engine then configures the row with only the new key.
func TestRotationSealsCatalogSecrets(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	e.addServer(t, "c1") // its config holds "client_secret":"csecret" in clear
	k2, _ := secret.GenerateKey("k2")
	both, _ := secret.ParseKeyring(k2 + "," + e.keys)
	st, err := sealedSets().Rotate(ctx, e.pool, both, 10, nil)
	if err != nil || !st.Complete() {
		t.Fatalf("RotateKeys = %+v, %v", st, err)
	}
	var catalog sealed.Rotation
	for _, tr := range st.Tables {
		if strings.HasPrefix(tr.Table, "mcp_servers") {
			catalog = tr
		}
	}
	if catalog.Resealed != 1 {
		t.Fatalf("catalog rotation = %+v", st.Tables)
	}
	var cfg string
	if err := e.pool.QueryRow(ctx, `SELECT config::text FROM mcp_servers WHERE slug = 'c1'`).Scan(&cfg); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(cfg, "csecret") {
		t.Fatalf("catalog secret left in clear: %s", cfg)
	}
	e.keys = k2
	eng := e.engine(t, engineOpts{redisURL: "-"})
	id := e.addConnection(t, "c1")
	e.connect(t, eng, id)
	only, _ := secret.ParseKeyring(k2)
	if u, err := sealedSets().UnknownKeyIDs(ctx, e.pool, only); err != nil || len(u) != 0 {
		t.Fatalf("UnknownKeyIDs = %v, %v", u, err)
	}
}
