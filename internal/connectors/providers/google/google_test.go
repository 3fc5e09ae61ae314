package google_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"golang.org/x/oauth2"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connectors/providers/google"
	"github.com/guilds/guilds/internal/integrations"
)

func env(vars map[string]string) func(string) string {
	return func(k string) string { return vars[k] }
}

var clientEnv = env(map[string]string{google.EnvClientID: "gid.apps.googleusercontent.com", google.EnvClientSecret: "gsecret"})

func configurer(t *testing.T) connectors.Configurer {
	t.Helper()
	p, ok := connectors.Lookup(google.ID)
	if !ok {
		t.Fatal("google is not registered")
	}
	return p.(connectors.Configurer)
}

func configure(t *testing.T, sub connectors.SubService, cfg string) connectors.OAuthProvider {
	t.Helper()
	p, err := configurer(t).Configure(connectors.ProviderConfig{Server: string(sub), SubService: sub, Config: json.RawMessage(cfg), Integrations: integrations.New(clientEnv)})
	if err != nil {
		t.Fatal(err)
	}
	return p.(connectors.OAuthProvider)
}

func TestAuthCodeURL(t *testing.T) {
	for _, tc := range []struct {
		sub    connectors.SubService
		scopes string
	}{
		{google.Gmail, "https://www.googleapis.com/auth/gmail.readonly https://www.googleapis.com/auth/gmail.compose"},
		{google.Drive, "https://www.googleapis.com/auth/drive"},
	} {
		t.Run(string(tc.sub), func(t *testing.T) {
			p := configure(t, tc.sub, `{"provider":"google","sub_service":"`+string(tc.sub)+`"}`)
			verifier := oauth2.GenerateVerifier()
			raw, err := p.AuthCodeURL(connectors.AuthRequest{SubService: tc.sub, State: "st", Verifier: verifier, RedirectURL: "https://guilds.example/api/mcp/oauth/callback"})
			if err != nil {
				t.Fatal(err)
			}
			u, _ := url.Parse(raw)
			if u.Scheme+"://"+u.Host+u.Path != google.AuthURL {
				t.Fatalf("endpoint %s", raw)
			}
			q := u.Query()
			for k, v := range map[string]string{
				"client_id": "gid.apps.googleusercontent.com", "response_type": "code", "state": "st",
				"redirect_uri": "https://guilds.example/api/mcp/oauth/callback", "scope": tc.scopes,
				"access_type": "offline", "prompt": "consent", "code_challenge_method": "S256",
				"code_challenge": oauth2.S256ChallengeFromVerifier(verifier),
			} {
				if q.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, q.Get(k), v)
				}
			}
			if strings.Contains(raw, "gsecret") || strings.Contains(raw, verifier) {
				t.Fatalf("URL carries a secret: %s", raw)
			}
		})
	}
}

// Gmail and Drive share one client: the same configured instance.
func TestSharedClient(t *testing.T) {
	cfg := `{"oauth":{"token_url":"https://proxy.example/shared-token"}}`
	gm := configure(t, google.Gmail, cfg)
	dr := configure(t, google.Drive, cfg)
	if gm != dr {
		t.Fatal("gmail and drive got different clients")
	}
	if gm.ID() != google.ID {
		t.Fatalf("id %s", gm.ID())
	}
}

func TestConfigureRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sub    connectors.SubService
		cfg    string
		getenv func(string) string
	}{
		{"no client id", google.Gmail, `{}`, env(map[string]string{google.EnvClientSecret: "gsecret"})},
		{"no client secret", google.Gmail, `{}`, env(map[string]string{google.EnvClientID: "gid"})},
		{"no environment", google.Gmail, `{}`, env(nil)},
		{"unknown sub-service", "calendar", `{}`, clientEnv},
		{"no sub-service", "", `{}`, clientEnv},
		{"http token override", google.Drive, `{"oauth":{"token_url":"http://proxy.example/token"}}`, clientEnv},
		{"metadata override", google.Drive, `{"oauth":{"token_url":"https://169.254.169.254/token"}}`, clientEnv},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := configurer(t).Configure(connectors.ProviderConfig{Server: "gmail", SubService: tc.sub, Config: json.RawMessage(tc.cfg), Integrations: integrations.New(tc.getenv)})
			if err == nil {
				t.Fatal("accepted")
			}
			if strings.Contains(err.Error(), "gsecret") {
				t.Fatalf("error shows the secret: %v", err)
			}
		})
	}
}

// The client id and secret come from the integrations registry, the one
// reader of the box's environment: a provider handed the variables only
// through Getenv has no client, and one whose registry holds them has it.
func TestClientComesFromTheIntegrationsRegistry(t *testing.T) {
	cfg := json.RawMessage(`{"provider":"google","sub_service":"gmail"}`)
	if _, err := configurer(t).Configure(connectors.ProviderConfig{Server: "gmail", SubService: google.Gmail, Config: cfg,
		Getenv: clientEnv, Integrations: integrations.New(env(nil))}); err == nil {
		t.Fatal("the client was read from Getenv, not from the integrations registry")
	}
	p, err := configurer(t).Configure(connectors.ProviderConfig{Server: "gmail", SubService: google.Gmail, Config: cfg,
		Getenv: env(nil), Integrations: integrations.New(clientEnv)})
	if err != nil {
		t.Fatalf("the registry's client was refused: %v", err)
	}
	raw, err := p.(connectors.OAuthProvider).AuthCodeURL(connectors.AuthRequest{SubService: google.Gmail, State: "st",
		Verifier: oauth2.GenerateVerifier(), RedirectURL: "https://guilds.example/api/mcp/oauth/callback"})
	if err != nil || !strings.Contains(raw, "client_id=gid.apps.googleusercontent.com") {
		t.Fatalf("authorization URL %q, %v", raw, err)
	}
}

// googleToken is Google's token and revocation endpoint as seen on the wire:
// client credentials in the form, no refresh token rotation.
type googleToken struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []url.Values
	auth []string
}

func newGoogleToken(t *testing.T) *googleToken {
	g := &googleToken{}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		g.mu.Lock()
		g.reqs = append(g.reqs, r.PostForm)
		g.auth = append(g.auth, r.Header.Get("Authorization"))
		g.mu.Unlock()
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.URL.Path == "/revoke" {
			_, _ = fmt.Fprint(w, `{}`)
			return
		}
		if r.PostForm.Get("client_secret") != "gsecret" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = fmt.Fprint(w, `{"error":"invalid_client","error_description":"Unauthorized"}`)
			return
		}
		switch r.PostForm.Get("grant_type") {
		case "authorization_code":
			fmt.Fprint(w, `{"access_token":"ya29.first","expires_in":3599,"refresh_token":"1//refresh","scope":"https://www.googleapis.com/auth/drive","token_type":"Bearer"}`)
		case "refresh_token":
			if r.PostForm.Get("refresh_token") != "1//refresh" {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"error":"invalid_grant","error_description":"Token has been expired or revoked."}`)
				return
			}
			fmt.Fprint(w, `{"access_token":"ya29.second","expires_in":3599,"scope":"https://www.googleapis.com/auth/drive","token_type":"Bearer"}`)
		}
	}))
	t.Cleanup(g.Close)
	return g
}

func TestExchangeRefreshRevoke(t *testing.T) {
	g := newGoogleToken(t)
	p := configure(t, google.Drive, fmt.Sprintf(`{"provider":"google","sub_service":"drive","oauth":{"token_url":%q,"revoke_url":%q}}`,
		g.URL+"/token", g.URL+"/revoke"))
	ctx := context.Background()

	cred, err := p.Exchange(ctx, connectors.ExchangeRequest{SubService: google.Drive, Code: "4/0code", Verifier: "ver", RedirectURL: "https://guilds.example/cb"})
	if err != nil || cred.AccessToken != "ya29.first" || cred.RefreshToken != "1//refresh" {
		t.Fatalf("exchange: %s %v", cred, err)
	}
	// Google does not rotate: the old refresh token stays.
	cred, err = p.Refresh(ctx, google.Drive, cred)
	if err != nil || cred.AccessToken != "ya29.second" || cred.RefreshToken != "1//refresh" {
		t.Fatalf("refresh: %s %v", cred, err)
	}
	_, err = p.Refresh(ctx, google.Drive, connectors.Credential{RefreshToken: "1//revoked"})
	if c := p.ClassifyError(err); err == nil || !c.Permanent || c.Code != "invalid_grant" {
		t.Fatalf("revoked refresh: %+v %v", c, err)
	}
	if err := p.Revoke(ctx, cred); err != nil {
		t.Fatal(err)
	}

	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.reqs) != 4 {
		t.Fatalf("%d requests", len(g.reqs))
	}
	for i, f := range g.reqs[:3] {
		if f.Get("client_id") != "gid.apps.googleusercontent.com" || g.auth[i] != "" {
			t.Errorf("request %d authenticates with %v / %q", i, f, g.auth[i])
		}
	}
	if f := g.reqs[0]; f.Get("code") != "4/0code" || f.Get("code_verifier") != "ver" || f.Get("redirect_uri") != "https://guilds.example/cb" {
		t.Errorf("exchange form %v", f)
	}
	if f := g.reqs[3]; f.Get("token") != "1//refresh" || f.Get("token_type_hint") != "refresh_token" {
		t.Errorf("revoke form %v", f)
	}
}
