package connectors_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/connectors"
	_ "github.com/guilds/guilds/internal/connectors/providers/oauthgeneric"
	"github.com/guilds/guilds/internal/dpop"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
)

// dpopLogin prepares a catalog row against as (as the platform does),
// runs one login through the engine and returns the connection and engine.
func dpopLogin(t *testing.T, as *oauthtest.Server) (*connectors.Engine, uuid.UUID) {
	t.Helper()
	ctx := context.Background()
	e := newEnv(t)
	rs := as.Protect(t, "/mcp", http.NotFoundHandler(), nil)
	const redirect = "http://127.0.0.1:1/callback"
	d := &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}
	p, err := d.Prepare(ctx, rs.URL+"/mcp", redirect, "guilds", nil)
	if err != nil {
		t.Fatal(err)
	}
	slug := "dpop-" + randHex(3)
	if _, err := e.pool.Exec(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config) VALUES ($1, $1, 'http', $2, 'oauth', $3)`,
		slug, rs.URL+"/mcp", string(p.Config)); err != nil {
		t.Fatal(err)
	}
	id := e.addConnection(t, slug)
	eng := e.engine(t, engineOpts{redisURL: "-"})
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
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || back.Query().Get("code") == "" {
		t.Fatalf("authorization answered %d %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	if _, err := eng.CompleteOAuth(ctx, back.Query().Get("state"), back.Query().Get("code")); err != nil {
		t.Fatalf("CompleteOAuth: %v (refusals %q)", err, as.DPoPRefusals())
	}
	return eng, id
}

func TestDPoPLoginBindsTokensToASealedKey(t *testing.T) {
	for _, nonce := range []bool{false, true} {
		t.Run(map[bool]string{false: "no nonce", true: "nonce"}[nonce], func(t *testing.T) {
			as := oauthtest.New(t)
			as.DPoP, as.DPoPNonce = true, nonce
			eng, id := dpopLogin(t, as)
			ctx := context.Background()
			cred, err := eng.Resolver().Token(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if !cred.DPoPBound() || cred.TokenType != "DPoP" {
				t.Fatalf("credential not DPoP-bound: %v type %q", cred, cred.TokenType)
			}
			k, err := dpop.ParsePrivate([]byte(cred.DPoPKey))
			if err != nil {
				t.Fatal(err)
			}
			if as.BoundTo(cred.AccessToken) != k.Thumbprint() {
				t.Fatal("the access token is not bound to the sealed key")
			}
			if got := connectors.DefaultInjection(cred).Headers["Authorization"]; got != "DPoP "+cred.AccessToken {
				t.Fatalf("Authorization %q", got)
			}
			if s := cred.String() + " " + fmtAll(cred); strings.Contains(s, cred.DPoPKey) || strings.Contains(s, k.PublicJWK()["x"]) {
				t.Fatalf("the key is printed: %s", s)
			}
			// A refresh proves possession of the same key (the refresh token
			// is bound to it too) and keeps it.
			fresh, err := eng.Resolver().Refresh(ctx, id)
			if err != nil {
				t.Fatalf("refresh: %v (refusals %q)", err, as.DPoPRefusals())
			}
			if fresh.AccessToken == cred.AccessToken || fresh.DPoPKey != cred.DPoPKey || as.BoundTo(fresh.AccessToken) != k.Thumbprint() {
				t.Fatal("the refreshed token is not bound to the login's key")
			}
			challenges := 0
			if nonce {
				challenges = 2 // one for the code exchange, one for the refresh
			}
			if as.Count("dpop-proof") != 2 || as.Count("dpop-nonce-challenge") != challenges || len(as.DPoPRefusals()) != 0 {
				t.Fatalf("proofs %d challenges %d refusals %q", as.Count("dpop-proof"), as.Count("dpop-nonce-challenge"), as.DPoPRefusals())
			}
		})
	}
}

func TestNoDPoPWhereTheServerDoesNotOfferIt(t *testing.T) {
	as := oauthtest.New(t)
	eng, id := dpopLogin(t, as)
	ctx := context.Background()
	cred, err := eng.Resolver().Token(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if cred.DPoPKey != "" || cred.DPoPBound() || connectors.DefaultInjection(cred).Headers["Authorization"] != "Bearer "+cred.AccessToken {
		t.Fatalf("a login without DPoP got a key or scheme: %v", cred)
	}
	if _, err := eng.Resolver().Refresh(ctx, id); err != nil {
		t.Fatal(err)
	}
	if as.Count("dpop-unexpected") != 0 {
		t.Fatal("a proof was sent to a server that does not take DPoP")
	}
}

func TestDPoPRefreshWithoutTheKeyIsRefused(t *testing.T) {
	// The test server binds refresh tokens: a refresh that presents no
	// proof of the key is refused, so the sealed key is what keeps the login.
	as := oauthtest.New(t)
	as.DPoP = true
	eng, id := dpopLogin(t, as)
	cred, err := eng.Resolver().Token(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {cred.RefreshToken}, "client_id": {cred.Client.ClientID}}
	resp, err := http.PostForm(as.URL+"/token", form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct{ Error string }
	_ = json.NewDecoder(resp.Body).Decode(&body)
	if resp.StatusCode != 400 || body.Error != "invalid_dpop_proof" {
		t.Fatalf("a refresh without a proof answered %d %q", resp.StatusCode, body.Error)
	}
}

func fmtAll(c connectors.Credential) string {
	b, _ := json.Marshal(c)
	return string(b)
}
