package connect_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	acts "github.com/guilds/guilds/activities/connect"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connectors/providers/google"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// A row whose client the box configures (Drive: provider google) goes
// straight to the authorization URL: no discovery, no registration, and its
// config keeps its provider.
func TestPrepareSkipsDiscoveryForConfiguredProviders(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	var hits atomic.Int64
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		http.Error(w, "unauthorized", http.StatusUnauthorized)
	}))
	t.Cleanup(remote.Close)
	k, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{google.EnvClientID: "cid.apps.googleusercontent.com", google.EnvClientSecret: "csecret"}
	eng, err := connectors.New(ctx, connectors.Options{DB: db, Keyring: kr, Providers: []connectors.ProviderID{"google"},
		Getenv: func(k string) string { return env[k] }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	const cfg = `{"provider": "google", "sub_service": "drive"}`
	var sid string
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
VALUES ('drive', 'Drive', 'remote', 'http', $1, 'oauth', $2)
ON CONFLICT (slug) DO UPDATE SET url = EXCLUDED.url, config = EXCLUDED.config RETURNING id`, remote.URL+"/mcp", cfg).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	cid := connectionstest.Insert(t, db, sid, "organisation", uuid.NewString())
	a := &acts.Activities{DB: db, Engine: eng, Keyring: kr, Discoverer: &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}}
	raw, err := a.Prepare(ctx, acts.PrepareInput{ConnectionID: cid, RedirectURI: "http://127.0.0.1:8080/api/mcp/oauth/callback"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host != "accounts.google.com" || u.Query().Get("client_id") != env[google.EnvClientID] ||
		u.Query().Get("code_challenge_method") != "S256" {
		t.Fatalf("authorization URL %s", raw)
	}
	var stored string
	_ = db.QueryRow(ctx, `SELECT config::text FROM mcp_servers WHERE id = $1`, sid).Scan(&stored)
	if hits.Load() != 0 || !strings.Contains(stored, `"google"`) || strings.Contains(stored, `"oauth"`) {
		t.Fatalf("discovery ran: %d requests, config %s", hits.Load(), stored)
	}
	var pending int
	_ = db.QueryRow(ctx, `SELECT count(*) FROM connection_oauth_pending WHERE connection_id = $1`, cid).Scan(&pending)
	if pending != 1 {
		t.Fatalf("pending logins: %d", pending)
	}
}
