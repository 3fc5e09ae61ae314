package mcpoauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
)

func TestPolicyCheck(t *testing.T) {
	strict := mcpoauth.Policy{}
	loop := mcpoauth.Policy{AllowLoopback: true}
	private := mcpoauth.Policy{AllowLoopback: true, AllowPrivate: true}
	cases := []struct {
		p    mcpoauth.Policy
		url  string
		okay bool
	}{
		{strict, "https://mcp.notion.com/mcp", true},
		{strict, "http://mcp.notion.com/mcp", false},
		{strict, "https://127.0.0.1/token", false},
		{loop, "http://127.0.0.1:8080/token", true},
		{loop, "http://localhost:8080/token", true},
		{loop, "http://10.0.0.5/token", false},
		{loop, "https://10.0.0.5/token", false},
		{private, "https://10.0.0.5/token", true},
		{private, "http://169.254.169.254/latest/meta-data", false},
		{private, "https://169.254.169.254/latest", false},
		{private, "https://[fe80::1]/x", false},
		{private, "https://metadata.google.internal/x", false},
		{strict, "https://user:pw@example.com/x", false},
		{strict, "ftp://example.com/x", false},
		{strict, "/relative", false},
		{strict, "https://[::1]/x", false},
	}
	for _, c := range cases {
		_, err := c.p.Check(c.url)
		if (err == nil) != c.okay {
			t.Errorf("%+v Check(%q) = %v, want ok=%v", c.p, c.url, err, c.okay)
		}
		if err != nil && !errors.Is(err, mcpoauth.ErrBlockedEndpoint) {
			t.Errorf("error %v does not wrap ErrBlockedEndpoint", err)
		}
	}
}

func TestPolicyClientRefusesDialToLoopback(t *testing.T) {
	as := oauthtest.New(t)
	_, err := mcpoauth.Policy{}.Client(0).Get(as.URL + "/.well-known/oauth-authorization-server")
	if !errors.Is(err, mcpoauth.ErrBlockedEndpoint) {
		t.Fatalf("strict client reached loopback: %v", err)
	}
	resp, err := mcpoauth.Policy{AllowLoopback: true}.Client(0).Get(as.URL + "/.well-known/oauth-authorization-server")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

func TestParseChallenge(t *testing.T) {
	c := mcpoauth.ParseChallenge([]string{`Bearer error="invalid_token", resource_metadata="https://a.example/.well-known/oauth-protected-resource/mcp", scope="read write"`})
	if c.ResourceMetadata != "https://a.example/.well-known/oauth-protected-resource/mcp" || c.Scope != "read write" {
		t.Fatalf("%+v", c)
	}
	c = mcpoauth.ParseChallenge([]string{`Basic realm="x"`, `Bearer resource_metadata=https://b.example/prm`})
	if c.ResourceMetadata != "https://b.example/prm" {
		t.Fatalf("%+v", c)
	}
	// A DPoP resource (RFC 9449 7.1) challenges with its own scheme.
	c = mcpoauth.ParseChallenge([]string{`DPoP algs="ES256", resource_metadata="https://c.example/prm"`})
	if c.ResourceMetadata != "https://c.example/prm" {
		t.Fatalf("%+v", c)
	}
}

func TestPrepareRegistersOncePerRedirect(t *testing.T) {
	ctx := context.Background()
	as := oauthtest.New(t)
	rs := as.Protect(t, "/mcp", http.NotFoundHandler(), nil)
	d := &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}
	p, err := d.Prepare(ctx, rs.URL+"/mcp", "http://127.0.0.1:1/cb", "guilds", json.RawMessage(`{"provider":"oauth2","dynamic_registration":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Changed || p.OAuth.ClientID == "" || p.OAuth.AuthStyle != "none" || p.OAuth.TokenURL != as.URL+"/token" {
		t.Fatalf("%+v", p)
	}
	var row map[string]any
	_ = json.Unmarshal(p.Config, &row)
	if row["resource"] != rs.URL+"/mcp" || row["dynamic_registration"] != true || row["provider"] != "oauth2" {
		t.Fatalf("row config %v", row)
	}
	again, err := d.Prepare(ctx, rs.URL+"/mcp", "http://127.0.0.1:1/cb", "guilds", p.Config)
	if err != nil {
		t.Fatal(err)
	}
	if again.Changed || as.Count("register") != 1 {
		t.Fatalf("second prepare changed=%v registrations=%d", again.Changed, as.Count("register"))
	}
	other, err := d.Prepare(ctx, rs.URL+"/mcp", "https://guilds.example/api/mcp/oauth/callback", "guilds", p.Config)
	if err != nil {
		t.Fatal(err)
	}
	if !other.Changed || other.OAuth.ClientID == p.OAuth.ClientID || as.Count("register") != 2 {
		t.Fatalf("new redirect URI must register a new client: %+v", other.OAuth)
	}
}

func TestPrepareConfidentialClient(t *testing.T) {
	as := oauthtest.New(t)
	as.AuthMethod = "client_secret_post"
	rs := as.Protect(t, "/mcp", http.NotFoundHandler(), nil)
	d := &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}
	p, err := d.Prepare(context.Background(), rs.URL+"/mcp", "http://127.0.0.1:1/cb", "guilds", nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.OAuth.AuthStyle != "post" || p.OAuth.ClientSecret == "" {
		t.Fatalf("%+v", p.OAuth)
	}
}

func TestPrepareRefusesBlockedMetadata(t *testing.T) {
	as := oauthtest.New(t)
	rs := as.Protect(t, "/mcp", http.NotFoundHandler(), nil)
	d := &mcpoauth.Discoverer{Policy: mcpoauth.Policy{}}
	if _, err := d.Prepare(context.Background(), rs.URL+"/mcp", "http://127.0.0.1:1/cb", "guilds", nil); !errors.Is(err, mcpoauth.ErrBlockedEndpoint) {
		t.Fatalf("strict policy must refuse a loopback server: %v", err)
	}
}

func TestS256MatchesOAuth2(t *testing.T) {
	v := oauth2.GenerateVerifier()
	if mcpoauth.S256(v) != oauth2.S256ChallengeFromVerifier(v) {
		t.Fatal("S256 disagrees with golang.org/x/oauth2")
	}
}

func TestPrepareCarriesDPoPAlgorithms(t *testing.T) {
	as := oauthtest.New(t)
	as.DPoP = true
	rs := as.Protect(t, "/mcp", http.NotFoundHandler(), nil)
	d := &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}
	p, err := d.Prepare(context.Background(), rs.URL+"/mcp", "http://127.0.0.1:1/cb", "guilds", nil)
	if err != nil {
		t.Fatal(err)
	}
	var row struct {
		OAuth struct {
			Algs []string `json:"dpop_signing_alg_values_supported"`
		} `json:"oauth"`
	}
	_ = json.Unmarshal(p.Config, &row)
	if len(row.OAuth.Algs) != 1 || row.OAuth.Algs[0] != "ES256" {
		t.Fatalf("row config %s", p.Config)
	}
	// A server without DPoP leaves the field out.
	plain := oauthtest.New(t)
	prs := plain.Protect(t, "/mcp", http.NotFoundHandler(), nil)
	q, err := d.Prepare(context.Background(), prs.URL+"/mcp", "http://127.0.0.1:1/cb", "guilds", nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(q.Config), "dpop") {
		t.Fatalf("row config %s", q.Config)
	}
}
