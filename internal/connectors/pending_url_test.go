package connectors_test

import (
	"bytes"
	"context"
	"testing"
)

// A pending login records the issuer the row was prepared with (for the
// callback's RFC 9207 check) and keeps its authorization URL sealed, read
// back by PendingAuthorizationURL.
func TestPendingLoginKeepsIssuerAndSealedURL(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	eng := e.engine(t, engineOpts{redisURL: "-"})
	e.addServer(t, "p1")
	if _, err := e.pool.Exec(ctx, `UPDATE mcp_servers SET config = jsonb_set(config, '{oauth,issuer}', '"https://as.example"') WHERE slug = 'p1'`); err != nil {
		t.Fatal(err)
	}
	id := e.addConnection(t, "p1")
	authURL, err := eng.BeginOAuth(ctx, id, "http://127.0.0.1:1/callback")
	if err != nil {
		t.Fatal(err)
	}
	var issuer string
	var sealed []byte
	if err := e.pool.QueryRow(ctx, `SELECT issuer, authorization_url FROM connection_oauth_pending WHERE connection_id = $1`, id).Scan(&issuer, &sealed); err != nil {
		t.Fatal(err)
	}
	if issuer != "https://as.example" {
		t.Fatalf("issuer = %q", issuer)
	}
	if len(sealed) == 0 || bytes.Contains(sealed, []byte(authURL)) || bytes.Contains(sealed, []byte("state=")) {
		t.Fatal("the authorization URL is not stored sealed")
	}
	got, err := eng.PendingAuthorizationURL(ctx, id)
	if err != nil || got != authURL {
		t.Fatalf("PendingAuthorizationURL = %q, %v; want %q", got, err, authURL)
	}
}
