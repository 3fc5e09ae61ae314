package mcppool_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/connectors"
	_ "github.com/guilds/guilds/internal/connectors/providers/oauthgeneric"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// An MCP server that takes only DPoP-bound tokens, with a fresh proof of
// the token's key (and its nonce) on each request; its authorization server
// asks for a nonce too. The login runs through the connector engine.
func TestDPoPBoundLoginWithNonces(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	as := oauthtest.New(t)
	as.DPoP, as.DPoPNonce, as.DPoPResourceNonce = true, true, true
	rs := as.Protect(t, "/mcp", server.NewStreamableHTTPServer(newMCP()), nil)

	const redirect = "http://127.0.0.1:1/callback"
	d := &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}
	prep, err := d.Prepare(ctx, rs.URL+"/mcp", redirect, "guilds", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config) VALUES ('dpop', 'dpop', 'http', $1, 'oauth', $2)`,
		rs.URL+"/mcp", string(prep.Config)); err != nil {
		t.Fatal(err)
	}
	k, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := connectors.New(ctx, connectors.Options{DB: db, Keyring: kr, Providers: []connectors.ProviderID{"oauth2"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	id, err := eng.EnsureConnection(ctx, "dpop", "platform", nil)
	if err != nil {
		t.Fatal(err)
	}
	authURL, err := eng.BeginOAuth(ctx, id, redirect)
	if err != nil {
		t.Fatal(err)
	}
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, _ := url.Parse(resp.Header.Get("Location"))
	if _, err := eng.CompleteOAuth(ctx, back.Query().Get("state"), back.Query().Get("code")); err != nil {
		t.Fatalf("login: %v (refusals %q)", err, as.DPoPRefusals())
	}

	probes := as.Count("dpop-unauthenticated") // Prepare's unauthenticated probe
	p := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(p.Close)
	if _, err := p.Sync(ctx, id.String()); err != nil {
		t.Fatalf("sync: %v (refusals %q)", err, as.DPoPRefusals())
	}
	out, err := p.Call(ctx, id.String(), "echo", json.RawMessage(`{"text":"hi"}`))
	if err != nil || out != "echo: hi" {
		t.Fatalf("call = %q, %v (refusals %q)", out, err, as.DPoPRefusals())
	}
	// One nonce challenge from the authorization server, one from the
	// resource (the nonce is remembered after), no refused proof, no
	// request without the DPoP scheme.
	if as.Count("dpop-nonce-challenge") != 2 || len(as.DPoPRefusals()) != 0 || as.Count("dpop-unauthenticated") != probes {
		t.Fatalf("challenges %d refusals %q unauthenticated %d", as.Count("dpop-nonce-challenge"), as.DPoPRefusals(), as.Count("dpop-unauthenticated"))
	}
	served := as.Count("dpop-resource")
	if served < 2 {
		t.Fatalf("resource requests with a proof: %d", served)
	}

	// An expired token: the 401 refreshes the login (with a proof of the
	// same key) and the call goes through with the new bound token.
	as.ExpireAccess()
	out, err = p.Call(ctx, id.String(), "echo", json.RawMessage(`{"text":"again"}`))
	if err != nil || out != "echo: again" {
		t.Fatalf("call after expiry = %q, %v (refusals %q)", out, err, as.DPoPRefusals())
	}
	if as.Count("refresh") != 1 || as.Count("dpop-resource") <= served || len(as.DPoPRefusals()) != 0 {
		t.Fatalf("refreshes %d resource requests %d refusals %q", as.Count("refresh"), as.Count("dpop-resource"), as.DPoPRefusals())
	}
}
