package mcpconformance_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/mcpconformance"
	"github.com/guilds/guilds/internal/mcpoauth"
)

// fakeServer is an MCP origin that is also its own authorization server.
type fakeServer struct {
	*httptest.Server
	metadata     bool   // publish RFC 9728 and RFC 8414 documents
	cimd         bool   // advertise client ID metadata documents
	prmResource  string // override of the protected resource
	registered   int
	lastRegister map[string]any
}

func newFake(t *testing.T, f *fakeServer) *fakeServer {
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/oauth-protected-resource/mcp", func(w http.ResponseWriter, r *http.Request) {
		if !f.metadata {
			http.NotFound(w, r)
			return
		}
		res := f.URL + "/mcp"
		if f.prmResource != "" {
			res = f.prmResource
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"resource": res, "authorization_servers": []string{f.URL},
			"scopes_supported": []string{"a", "b"}})
	})
	mux.HandleFunc("/.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		if !f.metadata {
			http.NotFound(w, r)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"issuer": f.URL, "authorization_endpoint": f.URL + "/oauth/authorize",
			"token_endpoint": f.URL + "/oauth/token", "registration_endpoint": f.URL + "/oauth/register",
			"token_endpoint_auth_methods_supported": []string{"client_secret_post"},
			"client_id_metadata_document_supported": f.cimd})
	})
	register := func(w http.ResponseWriter, r *http.Request) {
		f.registered++
		_ = json.NewDecoder(r.Body).Decode(&f.lastRegister)
		w.WriteHeader(http.StatusCreated)
		_ = json.NewEncoder(w).Encode(map[string]any{"client_id": "c1", "client_secret": "s1",
			"token_endpoint_auth_method": f.lastRegister["token_endpoint_auth_method"]})
	}
	mux.HandleFunc("/register", register)
	mux.HandleFunc("/oauth/register", register)
	mux.HandleFunc("/mcp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
		w.WriteHeader(http.StatusUnauthorized)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

func discoverer() mcpoauth.Discoverer {
	return mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}
}

func TestPrepareFallsBackToOriginEndpoints(t *testing.T) {
	f := newFake(t, &fakeServer{})
	p, err := mcpconformance.Prepare(context.Background(), discoverer(), mcpconformance.PrepareInput{
		MCPURL: f.URL + "/mcp", RedirectURI: "http://127.0.0.1:1/callback", ClientName: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Fallback || p.OAuth.AuthURL != f.URL+"/authorize" || p.OAuth.TokenURL != f.URL+"/token" {
		t.Fatalf("%+v", p)
	}
	if f.registered != 1 || p.OAuth.ClientID != "c1" || !p.OAuth.Registered || len(p.OAuth.Scopes) != 0 {
		t.Fatalf("registered=%d %+v", f.registered, p.OAuth)
	}
	var row map[string]any
	_ = json.Unmarshal(p.Config, &row)
	if row["provider"] != "oauth2" || row["resource"] != f.URL+"/mcp" {
		t.Fatalf("config %v", row)
	}

	// A second login for the same redirect URI keeps the registered client.
	again, err := mcpconformance.Prepare(context.Background(), discoverer(), mcpconformance.PrepareInput{
		MCPURL: f.URL + "/mcp", RedirectURI: "http://127.0.0.1:1/callback", ClientName: "test", Config: p.Config})
	if err != nil || f.registered != 1 || again.OAuth.ClientID != "c1" {
		t.Fatalf("again: %v registered=%d %+v", err, f.registered, again.OAuth)
	}
}

func TestPrepareScopeFromChallengeThenScopesSupported(t *testing.T) {
	f := newFake(t, &fakeServer{metadata: true})
	in := mcpconformance.PrepareInput{MCPURL: f.URL + "/mcp", RedirectURI: "http://127.0.0.1:1/callback", ClientName: "test"}
	p, err := mcpconformance.Prepare(context.Background(), discoverer(), in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(p.OAuth.Scopes, " ") != "a b" || p.Fallback || p.OAuth.AuthURL != f.URL+"/oauth/authorize" {
		t.Fatalf("%+v", p.OAuth)
	}
	if p.OAuth.AuthStyle != "post" || f.lastRegister["token_endpoint_auth_method"] != "client_secret_post" {
		t.Fatalf("style %q, registered with %v", p.OAuth.AuthStyle, f.lastRegister["token_endpoint_auth_method"])
	}
	in.Challenge = mcpconformance.Challenge{Status: 403, Challenge: mcpoauth.Challenge{Scope: "a c"}, InsufficientScope: true}
	p, err = mcpconformance.Prepare(context.Background(), discoverer(), in)
	if err != nil || strings.Join(p.OAuth.Scopes, " ") != "a c" {
		t.Fatalf("%v %+v", err, p.OAuth)
	}
}

func TestPreparePreRegisteredAndMetadataDocumentClients(t *testing.T) {
	f := newFake(t, &fakeServer{metadata: true, cimd: true})
	in := mcpconformance.PrepareInput{MCPURL: f.URL + "/mcp", RedirectURI: "http://127.0.0.1:1/callback", ClientName: "test",
		ClientMetadataURL: "https://client.example/metadata.json"}
	p, err := mcpconformance.Prepare(context.Background(), discoverer(), in)
	if err != nil || p.OAuth.ClientID != "https://client.example/metadata.json" || p.OAuth.AuthStyle != "none" || f.registered != 0 {
		t.Fatalf("%v %+v registered=%d", err, p.OAuth, f.registered)
	}
	in.Client = &mcpconformance.PreRegistered{ClientID: "pre", ClientSecret: "sec"}
	p, err = mcpconformance.Prepare(context.Background(), discoverer(), in)
	if err != nil || p.OAuth.ClientID != "pre" || p.OAuth.ClientSecret != "sec" || p.OAuth.AuthStyle != "post" || f.registered != 0 {
		t.Fatalf("%v %+v registered=%d", err, p.OAuth, f.registered)
	}
}

func TestPrepareRefusesAnotherResource(t *testing.T) {
	f := newFake(t, &fakeServer{metadata: true, prmResource: "https://evil.example.com/mcp"})
	_, err := mcpconformance.Prepare(context.Background(), discoverer(), mcpconformance.PrepareInput{
		MCPURL: f.URL + "/mcp", RedirectURI: "http://127.0.0.1:1/callback", ClientName: "test"})
	if err == nil || f.registered != 0 {
		t.Fatalf("a foreign resource must stop the login before registration: %v", err)
	}
}

func TestRecorderKeepsTheLastChallenge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Bearer error="insufficient_scope", scope="x y", resource_metadata="https://r.example/prm"`)
		w.WriteHeader(http.StatusForbidden)
	}))
	defer srv.Close()
	rec := &mcpconformance.Recorder{}
	resp, err := (&http.Client{Transport: rec}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	c := rec.Take()
	if c.Status != 403 || !c.InsufficientScope || c.Scope != "x y" || c.ResourceMetadata != "https://r.example/prm" {
		t.Fatalf("%+v", c)
	}
	if rec.Take().Status != 0 {
		t.Fatal("Take must forget the challenge")
	}
}

// fakeEngine stands in for the connector engine's pending-login store.
type fakeEngine struct {
	authURL  string
	state    string
	code     string
	complete error
}

func (e *fakeEngine) BeginOAuth(_ context.Context, _ uuid.UUID, redirect string) (string, error) {
	e.state = "st"
	return e.authURL + "?" + url.Values{"redirect_uri": {redirect}, "state": {e.state}}.Encode(), nil
}

func (e *fakeEngine) CompleteOAuth(_ context.Context, state, code string) (uuid.UUID, error) {
	if state != e.state {
		return uuid.Nil, errors.New("bad state")
	}
	e.code = code
	return uuid.Nil, e.complete
}

func TestAuthorizeFollowsTheRedirectToTheListener(t *testing.T) {
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, _ := url.Parse(r.URL.Query().Get("redirect_uri"))
		u.RawQuery = url.Values{"code": {"the-code"}, "state": {r.URL.Query().Get("state")}}.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}))
	defer as.Close()
	eng := &fakeEngine{authURL: as.URL + "/authorize"}
	l, err := mcpconformance.Listen(eng)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	if err := l.Authorize(context.Background(), http.DefaultClient, uuid.New()); err != nil {
		t.Fatal(err)
	}
	if eng.code != "the-code" {
		t.Fatalf("code %q", eng.code)
	}
	eng.complete = errors.New("exchange refused")
	if err := l.Authorize(context.Background(), http.DefaultClient, uuid.New()); err == nil {
		t.Fatal("a failed exchange must fail the login")
	}
}

func TestAuthorizeWithoutRedirectFails(t *testing.T) {
	as := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "login page", http.StatusOK)
	}))
	defer as.Close()
	l, err := mcpconformance.Listen(&fakeEngine{authURL: as.URL})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	if err := l.Authorize(context.Background(), http.DefaultClient, uuid.New()); err == nil {
		t.Fatal("an authorization server that shows a page instead of redirecting must fail the headless login")
	}
}
