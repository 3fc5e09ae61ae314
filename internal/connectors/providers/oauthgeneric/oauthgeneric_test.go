package oauthgeneric_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connectors/providers/oauthgeneric"
)

// tokenEndpoint is an OAuth 2 token and revocation endpoint speaking the RFC
// 6749 / 7009 wire format. answer decides each token response; every request
// is recorded.
type tokenEndpoint struct {
	*httptest.Server
	mu     sync.Mutex
	reqs   []seen
	answer func(w http.ResponseWriter, r seen)
}

type seen struct {
	Path string
	Auth string // Authorization header
	Type string // Content-Type
	Form url.Values
}

func newEndpoint(t *testing.T, answer func(w http.ResponseWriter, r seen)) *tokenEndpoint {
	te := &tokenEndpoint{answer: answer}
	te.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		_ = r.ParseForm()
		s := seen{Path: r.URL.Path, Auth: r.Header.Get("Authorization"), Type: r.Header.Get("Content-Type"), Form: r.PostForm}
		te.mu.Lock()
		te.reqs = append(te.reqs, s)
		te.mu.Unlock()
		if te.answer != nil {
			te.answer(w, s)
			return
		}
		tokens(w, "AT-1", "RT-1", 3600)
	}))
	t.Cleanup(te.Close)
	return te
}

func (te *tokenEndpoint) requests() []seen {
	te.mu.Lock()
	defer te.mu.Unlock()
	return append([]seen(nil), te.reqs...)
}

func tokens(w http.ResponseWriter, access, refresh string, expiresIn int) {
	body := map[string]any{"access_token": access, "token_type": "Bearer", "expires_in": expiresIn}
	if refresh != "" {
		body["refresh_token"] = refresh
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(body)
}

func oauthError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `{"error":%q,"error_description":"AT-leaked-in-description"}`, code)
}

func newProvider(t *testing.T, te *tokenEndpoint, mod func(*oauthgeneric.Config)) *oauthgeneric.Provider {
	t.Helper()
	cfg := oauthgeneric.Config{
		AuthURL: "https://as.example/authorize", TokenURL: te.URL + "/token", RevokeURL: te.URL + "/revoke",
		ClientID: "client id/1", ClientSecret: "s3cr&t", AuthStyle: oauthgeneric.AuthStyleBasic,
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := oauthgeneric.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func TestAuthCodeURL(t *testing.T) {
	verifier := oauth2.GenerateVerifier()
	for _, tc := range []struct {
		name     string
		scopes   map[connectors.SubService][]string
		params   map[string]string
		sub      connectors.SubService
		resource string
		want     url.Values // exact values; "" means absent
	}{
		{name: "bare", want: url.Values{"scope": {""}, "resource": {""}}},
		{name: "resource", resource: "https://mcp.example/mcp", want: url.Values{"resource": {"https://mcp.example/mcp"}}},
		{name: "default scopes", scopes: map[connectors.SubService][]string{"": {"read", "write"}},
			want: url.Values{"scope": {"read write"}}},
		{name: "sub-service scopes", sub: "mail", scopes: map[connectors.SubService][]string{"": {"read"}, "mail": {"mail.read"}},
			want: url.Values{"scope": {"mail.read"}}},
		{name: "sub-service falls back", sub: "files", scopes: map[connectors.SubService][]string{"": {"read"}, "mail": {"mail.read"}},
			want: url.Values{"scope": {"read"}}},
		{name: "extra parameters", params: map[string]string{"access_type": "offline", "prompt": "consent"},
			want: url.Values{"access_type": {"offline"}, "prompt": {"consent"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, newEndpoint(t, nil), func(c *oauthgeneric.Config) { c.Scopes, c.AuthParams = tc.scopes, tc.params })
			raw, err := p.AuthCodeURL(connectors.AuthRequest{SubService: tc.sub, State: "st-42", Verifier: verifier,
				RedirectURL: "https://guilds.example/cb", Resource: tc.resource})
			if err != nil {
				t.Fatal(err)
			}
			u, _ := url.Parse(raw)
			if u.Scheme != "https" || u.Host != "as.example" || u.Path != "/authorize" {
				t.Fatalf("endpoint %s", raw)
			}
			q := u.Query()
			base := url.Values{"response_type": {"code"}, "client_id": {"client id/1"}, "redirect_uri": {"https://guilds.example/cb"},
				"state": {"st-42"}, "code_challenge_method": {"S256"}, "code_challenge": {s256(verifier)}}
			for k, v := range tc.want {
				base[k] = v
			}
			for k, v := range base {
				if q.Get(k) != v[0] {
					t.Errorf("%s = %q, want %q", k, q.Get(k), v[0])
				}
			}
			if strings.Contains(raw, verifier) || q.Has("client_secret") || strings.Contains(raw, "s3cr") {
				t.Fatalf("the URL carries the verifier or the secret: %s", raw)
			}
		})
	}
}

func TestExchangeAuthStyles(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape("client id/1")+":"+url.QueryEscape("s3cr&t")))
	for _, tc := range []struct {
		style      oauthgeneric.AuthStyle
		auth       string // expected Authorization header
		formID     bool   // client_id in the form
		formSecret bool   // client_secret in the form
	}{
		{oauthgeneric.AuthStyleBasic, basic, false, false},
		{oauthgeneric.AuthStylePost, "", true, true},
		{oauthgeneric.AuthStyleNone, "", true, false},
	} {
		t.Run(string(tc.style), func(t *testing.T) {
			te := newEndpoint(t, nil)
			p := newProvider(t, te, func(c *oauthgeneric.Config) { c.AuthStyle = tc.style })
			before := time.Now()
			cred, err := p.Exchange(context.Background(), connectors.ExchangeRequest{Code: "code-1", Verifier: "ver-1",
				RedirectURL: "https://guilds.example/cb", Resource: "https://mcp.example/mcp"})
			if err != nil {
				t.Fatal(err)
			}
			if cred.AccessToken != "AT-1" || cred.RefreshToken != "RT-1" || !strings.EqualFold(cred.TokenType, "bearer") ||
				cred.Expiry.Before(before.Add(3600*time.Second)) {
				t.Fatalf("credential %s type %q expiry %v", cred, cred.TokenType, cred.Expiry)
			}
			reqs := te.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d token requests", len(reqs))
			}
			r := reqs[0]
			if r.Path != "/token" || r.Type != "application/x-www-form-urlencoded" || r.Auth != tc.auth {
				t.Fatalf("request %s %q auth %q", r.Path, r.Type, r.Auth)
			}
			for k, v := range map[string]string{"grant_type": "authorization_code", "code": "code-1", "code_verifier": "ver-1",
				"redirect_uri": "https://guilds.example/cb", "resource": "https://mcp.example/mcp"} {
				if r.Form.Get(k) != v {
					t.Errorf("%s = %q", k, r.Form.Get(k))
				}
			}
			if (r.Form.Get("client_id") == "client id/1") != tc.formID || r.Form.Has("client_secret") != tc.formSecret {
				t.Fatalf("form client_id %q, client_secret present %v", r.Form.Get("client_id"), r.Form.Has("client_secret"))
			}
			if tc.formSecret && r.Form.Get("client_secret") != "s3cr&t" {
				t.Fatalf("client_secret %q", r.Form.Get("client_secret"))
			}
		})
	}
}

// Without a configured style the client tries HTTP Basic, then the form.
func TestExchangeAutoDetectsStyle(t *testing.T) {
	te := newEndpoint(t, func(w http.ResponseWriter, r seen) {
		if r.Auth != "" {
			oauthError(w, http.StatusUnauthorized, "invalid_client")
			return
		}
		tokens(w, "AT-post", "RT-post", 60)
	})
	p := newProvider(t, te, func(c *oauthgeneric.Config) { c.AuthStyle = oauthgeneric.AuthStyleAuto })
	cred, err := p.Exchange(context.Background(), connectors.ExchangeRequest{Code: "c", Verifier: "v", RedirectURL: "https://guilds.example/cb"})
	if err != nil || cred.AccessToken != "AT-post" {
		t.Fatalf("%s %v", cred, err)
	}
	if reqs := te.requests(); len(reqs) != 2 || reqs[1].Form.Get("client_secret") != "s3cr&t" {
		t.Fatalf("requests %+v", reqs)
	}
}

func TestRefresh(t *testing.T) {
	for _, tc := range []struct {
		name    string
		rotated string // refresh token the server returns; "" none
		want    string
	}{
		{"rotation", "RT-new", "RT-new"},
		{"no rotation", "", "RT-old"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := newEndpoint(t, func(w http.ResponseWriter, r seen) { tokens(w, "AT-new", tc.rotated, 3600) })
			p := newProvider(t, te, func(c *oauthgeneric.Config) { c.Scopes = map[connectors.SubService][]string{"": {"read"}} })
			cred, err := p.Refresh(context.Background(), "", connectors.Credential{AccessToken: "AT-old", RefreshToken: "RT-old"})
			if err != nil {
				t.Fatal(err)
			}
			if cred.AccessToken != "AT-new" || cred.RefreshToken != tc.want || cred.Expiry.IsZero() {
				t.Fatalf("access %q refresh %q expiry %v", cred.AccessToken, cred.RefreshToken, cred.Expiry)
			}
			r := te.requests()[0]
			if r.Form.Get("grant_type") != "refresh_token" || r.Form.Get("refresh_token") != "RT-old" || r.Form.Has("code") {
				t.Fatalf("refresh form %v", r.Form)
			}
		})
	}
}

func TestClassifyError(t *testing.T) {
	for _, tc := range []struct {
		name      string
		answer    func(w http.ResponseWriter, r seen)
		permanent bool
		code      string
	}{
		{"invalid_grant", func(w http.ResponseWriter, _ seen) { oauthError(w, 400, "invalid_grant") }, true, "invalid_grant"},
		{"invalid_request", func(w http.ResponseWriter, _ seen) { oauthError(w, 400, "invalid_request") }, true, "invalid_request"},
		{"401 invalid_client", func(w http.ResponseWriter, _ seen) { oauthError(w, 401, "invalid_client") }, true, "invalid_client"},
		{"401 without a code", func(w http.ResponseWriter, _ seen) { w.WriteHeader(401) }, true, "http_401"},
		{"500", func(w http.ResponseWriter, _ seen) { http.Error(w, "AT-leaked upstream broke", 500) }, false, "http_500"},
		{"503 temporarily_unavailable", func(w http.ResponseWriter, _ seen) { oauthError(w, 503, "temporarily_unavailable") }, false, "temporarily_unavailable"},
		{"429", func(w http.ResponseWriter, _ seen) { w.WriteHeader(429) }, false, "http_429"},
		{"odd error code", func(w http.ResponseWriter, _ seen) { oauthError(w, 400, "AT-leaked token") }, false, "oauth_error"},
		{"malformed JSON", func(w http.ResponseWriter, _ seen) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"access_token": "AT-leaked`))
		}, false, "malformed_response"},
		{"no access token", func(w http.ResponseWriter, _ seen) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"token_type":"Bearer"}`))
		}, false, "malformed_response"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProvider(t, newEndpoint(t, tc.answer), nil)
			_, err := p.Refresh(context.Background(), "", connectors.Credential{RefreshToken: "RT-old"})
			if err == nil {
				t.Fatal("refresh succeeded")
			}
			got := p.ClassifyError(err)
			if got.Permanent != tc.permanent || got.Code != tc.code {
				t.Fatalf("ClassifyError = %+v, want permanent %v code %s (err %v)", got, tc.permanent, tc.code, err)
			}
		})
	}

	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		te := newEndpoint(t, func(w http.ResponseWriter, _ seen) { <-release })
		defer close(release)
		p := newProvider(t, te, func(c *oauthgeneric.Config) { c.HTTPClient = &http.Client{Timeout: 50 * time.Millisecond} })
		_, err := p.Refresh(context.Background(), "", connectors.Credential{RefreshToken: "RT-old"})
		if got := p.ClassifyError(err); err == nil || got.Permanent || got.Code != "timeout" {
			t.Fatalf("ClassifyError = %+v (err %v)", got, err)
		}
	})
	t.Run("context deadline", func(t *testing.T) {
		release := make(chan struct{})
		te := newEndpoint(t, func(w http.ResponseWriter, _ seen) { <-release })
		defer close(release)
		p := newProvider(t, te, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := p.Refresh(ctx, "", connectors.Credential{RefreshToken: "RT-old"})
		if got := p.ClassifyError(err); err == nil || got.Permanent || got.Code != "timeout" {
			t.Fatalf("ClassifyError = %+v (err %v)", got, err)
		}
	})
}

func TestRevoke(t *testing.T) {
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(url.QueryEscape("client id/1")+":"+url.QueryEscape("s3cr&t")))
	for _, tc := range []struct {
		name   string
		style  oauthgeneric.AuthStyle
		secret string
		cred   connectors.Credential
		token  string
		hint   string
		auth   string
		form   url.Values // client fields expected in the form; "" absent
	}{
		{"refresh token, basic", oauthgeneric.AuthStyleBasic, "s3cr&t", connectors.Credential{AccessToken: "AT", RefreshToken: "RT"},
			"RT", "refresh_token", basic, url.Values{"client_id": {""}, "client_secret": {""}}},
		{"access token only", oauthgeneric.AuthStyleBasic, "s3cr&t", connectors.Credential{AccessToken: "AT"},
			"AT", "access_token", basic, url.Values{"client_id": {""}}},
		{"post", oauthgeneric.AuthStylePost, "s3cr&t", connectors.Credential{AccessToken: "AT", RefreshToken: "RT"},
			"RT", "refresh_token", "", url.Values{"client_id": {"client id/1"}, "client_secret": {"s3cr&t"}}},
		{"public client", oauthgeneric.AuthStyleNone, "", connectors.Credential{RefreshToken: "RT"},
			"RT", "refresh_token", "", url.Values{"client_id": {"client id/1"}, "client_secret": {""}}},
		{"auto, public client", oauthgeneric.AuthStyleAuto, "", connectors.Credential{RefreshToken: "RT"},
			"RT", "refresh_token", "", url.Values{"client_id": {"client id/1"}, "client_secret": {""}}},
		{"auto, confidential client", oauthgeneric.AuthStyleAuto, "s3cr&t", connectors.Credential{RefreshToken: "RT"},
			"RT", "refresh_token", basic, url.Values{"client_id": {""}, "client_secret": {""}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			te := newEndpoint(t, func(w http.ResponseWriter, _ seen) { w.WriteHeader(http.StatusOK) })
			p := newProvider(t, te, func(c *oauthgeneric.Config) { c.AuthStyle, c.ClientSecret = tc.style, tc.secret })
			if err := p.Revoke(context.Background(), tc.cred); err != nil {
				t.Fatal(err)
			}
			reqs := te.requests()
			if len(reqs) != 1 {
				t.Fatalf("%d requests", len(reqs))
			}
			r := reqs[0]
			if r.Path != "/revoke" || r.Type != "application/x-www-form-urlencoded" || r.Auth != tc.auth ||
				r.Form.Get("token") != tc.token || r.Form.Get("token_type_hint") != tc.hint {
				t.Fatalf("revoke request %+v", r)
			}
			for k, v := range tc.form {
				if r.Form.Get(k) != v[0] {
					t.Errorf("%s = %q, want %q", k, r.Form.Get(k), v[0])
				}
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		te := newEndpoint(t, func(w http.ResponseWriter, _ seen) { oauthError(w, 400, "unsupported_token_type") })
		p := newProvider(t, te, nil)
		err := p.Revoke(context.Background(), connectors.Credential{RefreshToken: "RT-secret"})
		if err == nil || strings.Contains(err.Error(), "RT-secret") || strings.Contains(err.Error(), "AT-leaked") {
			t.Fatalf("revoke error %v", err)
		}
	})
	t.Run("no endpoint", func(t *testing.T) {
		te := newEndpoint(t, nil)
		p := newProvider(t, te, func(c *oauthgeneric.Config) { c.RevokeURL = "" })
		if err := p.Revoke(context.Background(), connectors.Credential{RefreshToken: "RT"}); err != nil || len(te.requests()) != 0 {
			t.Fatalf("revoke without an endpoint: %v, %d requests", err, len(te.requests()))
		}
	})
}

func TestEndpointChecks(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"https://as.example/token", true},
		{"https://as.example:8443/token", true},
		{"http://127.0.0.1:9000/token", true},
		{"http://localhost:9000/token", true},
		{"http://[::1]:9000/token", true},
		{"http://as.example/token", false},
		{"ftp://as.example/token", false},
		{"/token", false},
		{"as.example/token", false},
		{"https://169.254.169.254/latest/meta-data", false},
		{"https://169.254.10.1/token", false},
		{"https://metadata.google.internal/token", false},
		{"https://METADATA.GOOGLE.INTERNAL/token", false},
		{"https://[fe80::1]/token", false},
		{"https://[fd00:ec2::254]/token", false},
		{"http://169.254.169.254/token", false},
	} {
		t.Run(tc.url, func(t *testing.T) {
			for _, field := range []string{"auth", "token", "revoke"} {
				cfg := oauthgeneric.Config{AuthURL: "https://as.example/a", TokenURL: "https://as.example/t", ClientID: "c"}
				switch field {
				case "auth":
					cfg.AuthURL = tc.url
				case "token":
					cfg.TokenURL = tc.url
				case "revoke":
					cfg.RevokeURL = tc.url
				}
				_, err := oauthgeneric.New(cfg)
				if (err == nil) != tc.ok {
					t.Errorf("%s URL: New error %v, want ok=%v", field, err, tc.ok)
				}
			}
		})
	}
	if _, err := oauthgeneric.New(oauthgeneric.Config{AuthURL: "https://as.example/a", TokenURL: "https://as.example/t"}); err == nil {
		t.Error("a client without client_id was accepted")
	}
}

// The registered plugin reads its client from the catalog row.
func TestConfigureFromCatalogRow(t *testing.T) {
	plug, ok := connectors.Lookup(oauthgeneric.ID)
	if !ok {
		t.Fatal("oauth2 is not registered")
	}
	conf := plug.(connectors.Configurer)
	te := newEndpoint(t, nil)
	row := func(extra string) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"provider":"oauth2","oauth":{"auth_url":"https://as.example/authorize","token_url":%q,
"client_id":"cid","client_secret_env":"NOTION_CLIENT_SECRET","scopes":["read","write"],"auth_params":{"owner":"user"}%s}}`, te.URL+"/token", extra))
	}
	getenv := func(k string) string {
		if k == "NOTION_CLIENT_SECRET" {
			return "from-env"
		}
		return ""
	}
	p, err := conf.Configure(connectors.ProviderConfig{Server: "notion", Config: row(`,"auth_style":"post"`), Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	op := p.(connectors.OAuthProvider)
	raw, _ := op.AuthCodeURL(connectors.AuthRequest{State: "s", Verifier: oauth2.GenerateVerifier(), RedirectURL: "https://guilds.example/cb"})
	if q, _ := url.Parse(raw); q.Query().Get("scope") != "read write" || q.Query().Get("owner") != "user" {
		t.Fatalf("authorization URL %s", raw)
	}
	if _, err := op.Exchange(context.Background(), connectors.ExchangeRequest{Code: "c", Verifier: "v", RedirectURL: "https://guilds.example/cb"}); err != nil {
		t.Fatal(err)
	}
	if f := te.requests()[0].Form; f.Get("client_secret") != "from-env" || f.Get("client_id") != "cid" {
		t.Fatalf("client from the row: %v", f)
	}

	for name, cfg := range map[string]json.RawMessage{
		"bad auth_style": row(`,"auth_style":"magic"`),
		"not JSON":       json.RawMessage(`{`),
		"no client":      json.RawMessage(`{"oauth":{"auth_url":"https://as.example/a","token_url":"https://as.example/t"}}`),
		"http endpoint":  json.RawMessage(`{"oauth":{"auth_url":"http://as.example/a","token_url":"https://as.example/t","client_id":"c"}}`),
	} {
		if _, err := conf.Configure(connectors.ProviderConfig{Server: "notion", Config: cfg, Getenv: getenv}); err == nil {
			t.Errorf("%s: accepted", name)
		} else if strings.Contains(err.Error(), "from-env") {
			t.Errorf("%s: error shows the secret: %v", name, err)
		}
	}
}

// A row that names two authorization servers' clients (the MCP server
// moved): a login uses the client of the row's current issuer, a login
// sealed by the former server is neither refreshed (no request at all, a
// permanent issuer_changed verdict) nor revoked anywhere but at the former
// server's own endpoint.
func TestRegistrationsPerIssuer(t *testing.T) {
	plug, _ := connectors.Lookup(oauthgeneric.ID)
	conf := plug.(connectors.Configurer)
	old, cur := newEndpoint(t, nil), newEndpoint(t, nil)
	const redirect = "https://guilds.example/api/mcp/oauth/callback"
	row := json.RawMessage(fmt.Sprintf(`{"provider":"oauth2","oauth":{"auth_url":"https://as2.example/authorize","token_url":%q,
"issuer":"https://as2.example","client_id":"c2","auth_style":"none","registered":true,"redirect_uri":%q,"registrations":{
%q:{"client_id":"c1","auth_style":"none","issuer":"https://as1.example"},
%q:{"client_id":"c2","auth_style":"none","issuer":"https://as2.example"}}}}`,
		cur.URL+"/token", redirect, redirect, "https://as2.example "+redirect))
	p, err := conf.Configure(connectors.ProviderConfig{Server: "moved", Config: row})
	if err != nil {
		t.Fatal(err)
	}
	op := p.(connectors.OAuthProvider)
	raw, _ := op.AuthCodeURL(connectors.AuthRequest{State: "s", Verifier: oauth2.GenerateVerifier(), RedirectURL: redirect})
	if q, _ := url.Parse(raw); q.Query().Get("client_id") != "c2" {
		t.Fatalf("authorization URL %s", raw)
	}

	former := connectors.Credential{AccessToken: "AT-1", RefreshToken: "RT-of-AS1", Client: &connectors.OAuthClient{ClientID: "c1",
		AuthStyle: "none", TokenURL: old.URL + "/token", RevokeURL: old.URL + "/revoke", Issuer: "https://as1.example", RedirectURI: redirect}}
	_, err = op.Refresh(context.Background(), "", former)
	if !errors.Is(err, connectors.ErrIssuerChanged) {
		t.Fatalf("refresh of the former server's login: %v", err)
	}
	if c := op.ClassifyError(err); !c.Permanent || c.Code != connectors.CodeIssuerChanged {
		t.Fatalf("%+v", c)
	}
	if len(old.requests())+len(cur.requests()) != 0 {
		t.Fatal("a refresh request was sent")
	}
	if err := op.Revoke(context.Background(), former); err != nil {
		t.Fatal(err)
	}
	if len(cur.requests()) != 0 || len(old.requests()) != 1 || old.requests()[0].Path != "/revoke" {
		t.Fatalf("revoke went to the wrong server: old %d, new %d", len(old.requests()), len(cur.requests()))
	}

	current := former
	current.Client = &connectors.OAuthClient{ClientID: "c2", AuthStyle: "none", TokenURL: cur.URL + "/token",
		Issuer: "https://as2.example", RedirectURI: redirect}
	if _, err := op.Refresh(context.Background(), "", current); err != nil {
		t.Fatal(err)
	}
	if r := cur.requests(); len(r) != 1 || r[0].Form.Get("client_id") != "c2" {
		t.Fatalf("refresh of the current login: %+v", r)
	}
}
