package mcpoauth_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
)

func oauthOf(t *testing.T, config json.RawMessage) mcpoauth.OAuthConfig {
	t.Helper()
	var row struct {
		OAuth mcpoauth.OAuthConfig `json:"oauth"`
	}
	if err := json.Unmarshal(config, &row); err != nil {
		t.Fatal(err)
	}
	return row.OAuth
}

// An MCP server that moves to another authorization server (its RFC 9728
// metadata names a new issuer) gets a client registered there: the former
// server's client id is never sent to the new one, the former client stays
// stored under its issuer, and a move back finds it without registering.
func TestPrepareRegistersAgainAtANewAuthorizationServer(t *testing.T) {
	ctx := context.Background()
	as1, as2 := oauthtest.New(t), oauthtest.New(t)
	rs := as1.Protect(t, "/mcp", http.NotFoundHandler(), nil)
	d := &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}
	const redirect = "http://127.0.0.1:1/cb"
	first, err := d.Prepare(ctx, rs.URL+"/mcp", redirect, "guilds", nil)
	if err != nil {
		t.Fatal(err)
	}
	if first.OAuth.Issuer != as1.URL || as1.Count("register") != 1 {
		t.Fatalf("%+v", first.OAuth)
	}

	as1.MoveResourcesTo(as2)
	moved, err := d.Prepare(ctx, rs.URL+"/mcp", redirect, "guilds", first.Config)
	if err != nil {
		t.Fatal(err)
	}
	o := oauthOf(t, moved.Config)
	if !moved.Changed || o.Issuer != as2.URL || o.TokenURL != as2.URL+"/token" || as2.Count("register") != 1 || as1.Count("register") != 1 {
		t.Fatalf("after the move: %+v (registrations at AS1 %d, AS2 %d)", o, as1.Count("register"), as2.Count("register"))
	}
	if o.ClientID == first.OAuth.ClientID {
		t.Fatal("the former authorization server's client id is used at the new one")
	}
	r1, ok1 := o.Registration(as1.URL, redirect)
	r2, ok2 := o.Registration(as2.URL, redirect)
	if !ok1 || r1.ClientID != first.OAuth.ClientID || r1.Issuer != as1.URL || !ok2 || r2.ClientID != o.ClientID || r2.Issuer != as2.URL {
		t.Fatalf("registrations %+v", o.Registrations)
	}

	as1.MoveResourcesTo(as1)
	back, err := d.Prepare(ctx, rs.URL+"/mcp", redirect, "guilds", moved.Config)
	if err != nil {
		t.Fatal(err)
	}
	if back.OAuth.ClientID != first.OAuth.ClientID || as1.Count("register") != 1 || as2.Count("register") != 1 {
		t.Fatalf("a move back must reuse the first client: %+v", back.OAuth)
	}
}

// A row written before clients were kept per issuer (registrations keyed
// by redirect URI alone): its client belongs to the row's former issuer.
// Prepare reuses it while that server stays, and once the resource names a
// new server it registers there and writes the former issuer into the old
// entry, so the stored row cannot later read it as the new server's.
func TestPrepareReadsRegistrationsWithoutIssuer(t *testing.T) {
	ctx := context.Background()
	as1, as2 := oauthtest.New(t), oauthtest.New(t)
	rs := as1.Protect(t, "/mcp", http.NotFoundHandler(), nil)
	const redirect = "http://127.0.0.1:1/cb"
	as1.AddClient("legacy-client", "", "none", redirect)
	legacy, _ := json.Marshal(map[string]any{"provider": "oauth2", "oauth": map[string]any{
		"auth_url": as1.URL + "/authorize", "token_url": as1.URL + "/token", "issuer": as1.URL,
		"client_id": "legacy-client", "auth_style": "none", "registered": true, "redirect_uri": redirect,
		"registrations": map[string]any{redirect: map[string]any{"client_id": "legacy-client", "auth_style": "none"}}}})
	d := &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}
	same, err := d.Prepare(ctx, rs.URL+"/mcp", redirect, "guilds", legacy)
	if err != nil {
		t.Fatal(err)
	}
	if same.OAuth.ClientID != "legacy-client" || as1.Count("register") != 0 {
		t.Fatalf("the stored client of the same server must be kept: %+v", same.OAuth)
	}

	as1.MoveResourcesTo(as2)
	moved, err := d.Prepare(ctx, rs.URL+"/mcp", redirect, "guilds", legacy)
	if err != nil {
		t.Fatal(err)
	}
	o := oauthOf(t, moved.Config)
	if o.ClientID == "legacy-client" || as2.Count("register") != 1 {
		t.Fatalf("the legacy client was reused at the new server: %+v", o)
	}
	if r := o.Registrations[redirect]; r.ClientID != "legacy-client" || r.Issuer != as1.URL {
		t.Fatalf("the legacy entry must name its issuer now: %+v", o.Registrations)
	}
	if _, ok := o.Registration(as2.URL, redirect); !ok {
		t.Fatalf("no entry for the new server: %+v", o.Registrations)
	}
}

// With a redirect URI of the platform (its base, then the callback path)
// and a server that accepts client ID metadata documents, the document URL
// is the client id and nothing is registered; a server without that
// support, or a redirect URI of another shape, gets an RFC 7591 registration.
func TestPrepareUsesTheClientMetadataDocument(t *testing.T) {
	ctx := context.Background()
	as := oauthtest.New(t)
	as.ClientIDMetadataDocuments = true
	rs := as.Protect(t, "/mcp", http.NotFoundHandler(), nil)
	d := &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}
	const redirect = "http://127.0.0.1:8080/api/mcp/oauth/callback"
	p, err := d.Prepare(ctx, rs.URL+"/mcp", redirect, "guilds", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.OAuth.ClientID != "http://127.0.0.1:8080/oauth/client-metadata.json" || p.OAuth.AuthStyle != "none" || p.OAuth.ClientSecret != "" || as.Count("register") != 0 {
		t.Fatalf("%+v registrations=%d", p.OAuth, as.Count("register"))
	}
	if r, ok := p.OAuth.Registration(as.URL, redirect); !ok || !r.Document {
		t.Fatalf("%+v", p.OAuth.Registrations)
	}
	if other, err := d.Prepare(ctx, rs.URL+"/mcp", "http://127.0.0.1:1/cb", "guilds", nil); err != nil || other.OAuth.ClientID == "" ||
		as.Count("register") != 1 {
		t.Fatalf("a redirect URI that is not the platform's must register: %v %+v", err, other.OAuth)
	}

	// The server stops accepting documents: the next login registers.
	as.ClientIDMetadataDocuments = false
	again, err := d.Prepare(ctx, rs.URL+"/mcp", redirect, "guilds", p.Config)
	if err != nil {
		t.Fatal(err)
	}
	if again.OAuth.ClientID == p.OAuth.ClientID || as.Count("register") != 2 {
		t.Fatalf("%+v", again.OAuth)
	}
}

// The document is only offered where an authorization server can fetch it
// as the draft requires: an https base, or http on loopback in development.
func TestClientMetadataURL(t *testing.T) {
	for redirect, want := range map[string]string{
		"https://guilds.example/api/mcp/oauth/callback":       "https://guilds.example/oauth/client-metadata.json",
		"https://guilds.example/team/api/mcp/oauth/callback":  "https://guilds.example/team/oauth/client-metadata.json",
		"http://127.0.0.1:8080/api/mcp/oauth/callback":        "http://127.0.0.1:8080/oauth/client-metadata.json",
		"http://localhost:8080/api/mcp/oauth/callback":        "http://localhost:8080/oauth/client-metadata.json",
		"http://guilds.internal/api/mcp/oauth/callback":       "",
		"https://guilds.example/other/callback":               "",
		"https://guilds.example/api/mcp/oauth/callback?x=1":   "",
		"https://user@guilds.example/api/mcp/oauth/callback":  "",
		"https://guilds.example/api/mcp/oauth/callback/extra": "",
	} {
		if got := mcpoauth.ClientMetadataURL(redirect); got != want {
			t.Errorf("ClientMetadataURL(%q) = %q, want %q", redirect, got, want)
		}
	}
	doc, ok := mcpoauth.NewClientDocument("https://guilds.example/api/mcp/oauth/callback", "guilds")
	if !ok || doc.ClientID != "https://guilds.example/oauth/client-metadata.json" || doc.TokenEndpointAuthMethod != "none" ||
		doc.ApplicationType != "web" || len(doc.RedirectURIs) != 1 || doc.RedirectURIs[0] != "https://guilds.example/api/mcp/oauth/callback" {
		t.Fatalf("%+v", doc)
	}
	if _, ok := mcpoauth.NewClientDocument("http://guilds.internal/api/mcp/oauth/callback", "guilds"); ok {
		t.Fatal("a document for a plain-http public base")
	}
}

// The local authorization server accepts a document client only as the
// draft says: the document it fetches names the URL as its client_id and
// lists the redirect URI.
func TestLocalServerChecksTheDocument(t *testing.T) {
	as := oauthtest.New(t)
	as.ClientIDMetadataDocuments = true
	var doc mcpoauth.ClientDocument
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(site.Close)
	const redirect = "http://127.0.0.1:1/api/mcp/oauth/callback"
	authorize := func(clientID string) int {
		q := "client_id=" + clientID + "&redirect_uri=" + redirect + "&response_type=code&code_challenge_method=S256&code_challenge=abc&state=s"
		req, _ := http.NewRequest(http.MethodGet, as.URL+"/authorize?"+q, nil)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	doc = mcpoauth.ClientDocument{ClientID: site.URL, RedirectURIs: []string{redirect}, TokenEndpointAuthMethod: "none"}
	if s := authorize(site.URL); s != http.StatusFound {
		t.Fatalf("a valid document: HTTP %d", s)
	}
	doc.ClientID = "https://elsewhere.example/doc.json"
	if s := authorize(site.URL); s != http.StatusBadRequest {
		t.Fatalf("a document naming another client id: HTTP %d", s)
	}
	doc = mcpoauth.ClientDocument{ClientID: site.URL, RedirectURIs: []string{"http://127.0.0.1:2/cb"}, TokenEndpointAuthMethod: "none"}
	if s := authorize(site.URL); s != http.StatusBadRequest {
		t.Fatalf("a redirect URI the document does not list: HTTP %d", s)
	}
}

// A client the admin configured belongs to the authorization server it was
// configured for: once the resource names another one, Prepare refuses
// instead of sending that client id there, and registers nothing.
func TestPrepareRefusesAnAdminClientOfTheFormerServer(t *testing.T) {
	ctx := context.Background()
	as1, as2 := oauthtest.New(t), oauthtest.New(t)
	rs := as1.Protect(t, "/mcp", http.NotFoundHandler(), nil)
	d := &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}
	admin := json.RawMessage(`{"provider":"oauth2","oauth":{"client_id":"admin-client","client_secret":"s"}}`)
	p, err := d.Prepare(ctx, rs.URL+"/mcp", "http://127.0.0.1:1/cb", "guilds", admin)
	if err != nil || p.OAuth.ClientID != "admin-client" || p.OAuth.Issuer != as1.URL {
		t.Fatalf("%v %+v", err, p.OAuth)
	}
	as1.MoveResourcesTo(as2)
	if _, err := d.Prepare(ctx, rs.URL+"/mcp", "http://127.0.0.1:1/cb", "guilds", p.Config); err == nil {
		t.Fatal("the admin's client of AS1 was kept for AS2")
	}
	if as1.Count("register")+as2.Count("register") != 0 {
		t.Fatal("an admin-configured row registered a client")
	}
}
