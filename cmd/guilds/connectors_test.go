package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// tokenServer answers the token endpoint (and counts every request), or
// redirects it to redirect when that is set.
type tokenServer struct {
	*httptest.Server
	hits     atomic.Int64
	revokes  atomic.Int64
	redirect string
}

func newTokenServer(t *testing.T, redirect string) *tokenServer {
	ts := &tokenServer{redirect: redirect}
	ts.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/revoke" {
			ts.revokes.Add(1)
			return
		}
		ts.hits.Add(1)
		if ts.redirect != "" {
			http.Redirect(w, r, ts.redirect, http.StatusTemporaryRedirect)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "at-1", "refresh_token": "rt-1", "token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(ts.Close)
	return ts
}

// runtimeLogin builds the runtime exactly as serve and worker do, with a
// catalog row whose endpoints are on host, and starts a login on it.
func runtimeLogin(t *testing.T, env map[string]string, base string) (*connectorRuntime, uuid.UUID, string) {
	t.Helper()
	ctx := context.Background()
	db := testdb.New(t)
	k, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{"provider": "oauth2", "oauth": map[string]any{
		"auth_url": base + "/authorize", "token_url": base + "/token", "revoke_url": base + "/revoke", "client_id": "c", "auth_style": "none"}})
	if _, err := db.Exec(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
VALUES ('acme', 'Acme', 'http', 'https://mcp.example.com/mcp', 'oauth', $1)`, cfg); err != nil {
		t.Fatal(err)
	}
	rt, err := newConnectorRuntime(ctx, db, nil, kr, slog.New(slog.DiscardHandler), func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	id, err := rt.Engine.EnsureConnection(ctx, "acme", "platform", nil)
	if err != nil {
		t.Fatal(err)
	}
	authURL, err := rt.Engine.BeginOAuth(ctx, id, "http://127.0.0.1:9/api/mcp/oauth/callback")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(authURL)
	return rt, id, u.Query().Get("state")
}

// The engine's token calls go through the outbound policy: a token endpoint
// on loopback (a name resolving there) is refused before any request is
// sent unless the policy allows private addresses.
func TestTokenEndpointOnLoopbackRefusedByPolicy(t *testing.T) {
	ts := newTokenServer(t, "")
	base := strings.Replace(ts.URL, "127.0.0.1", "localhost", 1)
	rt, _, state := runtimeLogin(t, map[string]string{}, base)
	_, err := rt.Engine.CompleteOAuth(context.Background(), state, "code")
	if err == nil || !strings.Contains(err.Error(), "endpoint_refused") {
		t.Fatalf("exchange with a loopback token endpoint under the strict policy = %v, want endpoint_refused", err)
	}
	if n := ts.hits.Load(); n != 0 {
		t.Fatalf("the token endpoint received %d requests; the policy must refuse before dialling", n)
	}
}

// With private addresses allowed, loopback works; a token endpoint that
// redirects to a cloud metadata address is refused at the redirect, before
// dialling it.
func TestTokenEndpointRedirectToMetadataRefused(t *testing.T) {
	allow := map[string]string{"GUILDS_OAUTH_ALLOW_PRIVATE": "1"}
	for _, target := range []string{"http://169.254.169.254/latest/meta-data/", "http://metadata.google.internal/token"} {
		ts := newTokenServer(t, target)
		rt, _, state := runtimeLogin(t, allow, ts.URL)
		_, err := rt.Engine.CompleteOAuth(context.Background(), state, "code")
		if err == nil || !strings.Contains(err.Error(), "endpoint_refused") {
			t.Fatalf("exchange redirected to %s = %v, want endpoint_refused", target, err)
		}
		if n := ts.hits.Load(); n != 1 {
			t.Fatalf("token endpoint hits = %d, want 1", n)
		}
	}

	ts := newTokenServer(t, "")
	rt, id, state := runtimeLogin(t, allow, ts.URL)
	if _, err := rt.Engine.CompleteOAuth(context.Background(), state, "code"); err != nil {
		t.Fatalf("loopback token endpoint with private addresses allowed: %v", err)
	}
	if err := rt.Engine.Disconnect(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	if ts.revokes.Load() != 1 {
		t.Fatalf("revokes = %d, want 1", ts.revokes.Load())
	}
}
