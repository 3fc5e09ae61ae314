package connectors_test

import (
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/sealed"
	"github.com/guilds/guilds/internal/secret"
)

// sealedSets are the engine's sealed values and the organisations' model
// keys, registered as main does.
func sealedSets() *sealed.Registry {
	r := sealed.NewRegistry(connectors.SealedSets()...)
	r.Register(models.SealedKeys)
	return r
}

// Rotation re-seals every sealed table, organisation model keys included:
// after it, every value opens with only the new key, and the old key's id is
// no longer found in the database.
func TestRotationThenOnlyTheNewKey(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	eng := e.engine(t, engineOpts{redisURL: "-"})
	e.addServer(t, "r1")
	id := e.addConnection(t, "r1")
	e.connect(t, eng, id)
	want, err := eng.Resolver().Token(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	e.addServer(t, "r2")
	pid := e.addConnection(t, "r2")
	authURL, err := eng.BeginOAuth(ctx, pid, "http://127.0.0.1:1/callback")
	if err != nil {
		t.Fatal(err)
	}
	var org string
	if err := e.pool.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := models.SetOrgKey(ctx, e.pool, e.keyring(t), org, "openrouter", "sk-or-org-key"); err != nil {
		t.Fatal(err)
	}

	k2, _ := secret.GenerateKey("k2")
	both, _ := secret.ParseKeyring(k2 + "," + e.keys)
	st, err := sealedSets().Rotate(ctx, e.pool, both, 1, nil)
	if err != nil || !st.Complete() {
		t.Fatalf("RotateKeys = %+v, %v", st, err)
	}
	resealed := map[string]int{}
	for _, tr := range st.Tables {
		resealed[tr.Table] = tr.Resealed
	}
	if resealed["organisation_model_keys"] != 1 || resealed["connection_credentials"] != 1 || resealed["connection_oauth_pending"] != 1 {
		t.Fatalf("re-sealed per table = %v", resealed)
	}
	again, err := sealedSets().Rotate(ctx, e.pool, both, 1, nil)
	if err != nil || !again.Complete() || again.Of("organisation_model_keys").Resealed != 0 || again.Of("organisation_model_keys").Current != 1 {
		t.Fatalf("second RotateKeys = %+v, %v", again, err)
	}

	only, _ := secret.ParseKeyring(k2)
	if u, err := sealedSets().UnknownKeyIDs(ctx, e.pool, only); err != nil || len(u) != 0 {
		t.Fatalf("UnknownKeyIDs after rotation = %v, %v", u, err)
	}
	if k, err := models.OrgKey(ctx, e.pool, only, org, "openrouter"); err != nil || k != "sk-or-org-key" {
		t.Fatalf("org model key with only the new key: %v", err)
	}
	e.keys = k2
	eng2 := e.engine(t, engineOpts{redisURL: "-"})
	if c, err := eng2.Resolver().Token(ctx, id); err != nil || c.AccessToken != want.AccessToken {
		t.Fatalf("credential with only the new key: %v", err)
	}
	// The pending login's sealed URL and verifier open too: the code exchange completes.
	if got, err := eng2.PendingAuthorizationURL(ctx, pid); err != nil || got != authURL {
		t.Fatalf("pending authorization URL with only the new key: %v", err)
	}
	u, _ := url.Parse(authURL)
	e.ts.mu.Lock()
	e.ts.challenges["code-r2"] = u.Query().Get("code_challenge")
	e.ts.mu.Unlock()
	if _, err := eng2.CompleteOAuth(ctx, u.Query().Get("state"), "code-r2"); err != nil {
		t.Fatalf("pending login with only the new key: %v", err)
	}
}

// A key dropped too early: rotation refuses to call itself complete, names
// the missing key, and opening the value is a typed error with the remedy.
func TestRotationReportsUnknownKeys(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	var org string
	if err := e.pool.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := models.SetOrgKey(ctx, e.pool, e.keyring(t), org, "openrouter", "sk-or-org-key"); err != nil {
		t.Fatal(err)
	}
	k2, _ := secret.GenerateKey("k2")
	only, _ := secret.ParseKeyring(k2)
	st, err := sealedSets().Rotate(ctx, e.pool, only, 10, nil)
	if err != nil || st.Complete() {
		t.Fatalf("RotateKeys with the old key missing = %+v, %v; want incomplete", st, err)
	}
	u, err := sealedSets().UnknownKeyIDs(ctx, e.pool, only)
	if err != nil || len(u) != 1 || u[0] != (sealed.KeyUse{Table: "organisation_model_keys", KeyID: "k1", Rows: 1}) {
		t.Fatalf("UnknownKeyIDs = %v, %v", u, err)
	}
	_, err = models.OrgKey(ctx, e.pool, only, org, "openrouter")
	var uk *secret.UnknownKeyError
	if !errors.Is(err, secret.ErrUnknownKey) || !errors.As(err, &uk) || uk.KeyID != "k1" {
		t.Fatalf("OrgKey under a dropped key = %v, want an UnknownKeyError for k1", err)
	}
}
