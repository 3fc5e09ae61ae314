package mcpoauth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

const defaultTimeout = 15 * time.Second

// ClientMetadata is an RFC 7591 registration request.
type ClientMetadata struct {
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	Scope                   string   `json:"scope,omitempty"`
	// ApplicationType is "web" or "native" (OpenID Connect Dynamic Client
	// Registration, asked for by MCP 2026-07-28): an authorization server
	// that defaults to web refuses a loopback redirect URI otherwise.
	ApplicationType string `json:"application_type,omitempty"`
}

// ApplicationType is the application_type of a client that redirects to
// redirectURI: "native" for a loopback or non-https redirect (a CLI, the
// development server), "web" for the platform served over https.
func ApplicationType(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if err != nil || u.Scheme != "https" {
		return "native"
	}
	h := u.Hostname()
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return "native"
	}
	if ip := net.ParseIP(h); ip != nil && ip.IsLoopback() {
		return "native"
	}
	return "web"
}

// RegisteredClient is what the authorization server answered.
type RegisteredClient struct {
	ClientID                string `json:"client_id"`
	ClientSecret            string `json:"client_secret,omitempty"`
	TokenEndpointAuthMethod string `json:"token_endpoint_auth_method,omitempty"`
}

// Register registers a client at the server's registration endpoint. A
// public client (token_endpoint_auth_method "none") is asked for unless the
// server's metadata lists only confidential methods.
func (d *Discoverer) Register(ctx context.Context, md ServerMetadata, name, redirectURI, scope string) (RegisteredClient, error) {
	if md.RegistrationEndpoint == "" {
		return RegisteredClient{}, ErrNoRegistration
	}
	if _, err := d.Policy.Check(md.RegistrationEndpoint); err != nil {
		return RegisteredClient{}, err
	}
	method := "none"
	if m := md.TokenEndpointAuthMethodsSupported; len(m) > 0 && !slices.Contains(m, "none") {
		method = "client_secret_basic"
		if !slices.Contains(m, method) && slices.Contains(m, "client_secret_post") {
			method = "client_secret_post"
		}
	}
	body, _ := json.Marshal(ClientMetadata{ClientName: name, RedirectURIs: []string{redirectURI},
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: method, Scope: scope, ApplicationType: ApplicationType(redirectURI)})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, md.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return RegisteredClient{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := d.client().Do(req)
	if err != nil {
		return RegisteredClient{}, fmt.Errorf("client registration at %s: %w", hostOf(md.RegistrationEndpoint), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&e)
		return RegisteredClient{}, fmt.Errorf("client registration at %s refused: HTTP %d %s", hostOf(md.RegistrationEndpoint), resp.StatusCode, safeWord(e.Error))
	}
	var rc RegisteredClient
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&rc); err != nil || rc.ClientID == "" {
		return RegisteredClient{}, fmt.Errorf("client registration at %s: malformed answer", hostOf(md.RegistrationEndpoint))
	}
	if rc.TokenEndpointAuthMethod == "" {
		rc.TokenEndpointAuthMethod = method
		if method != "none" && rc.ClientSecret == "" {
			rc.TokenEndpointAuthMethod = "none"
		}
	}
	return rc, nil
}

// safeWord keeps an OAuth error code only when it looks like one.
func safeWord(s string) string {
	if len(s) > 40 {
		return ""
	}
	for _, r := range s {
		if r != '_' && (r < 'a' || r > 'z') && (r < '0' || r > '9') {
			return ""
		}
	}
	return s
}

// S256 is the PKCE challenge of a verifier (RFC 7636 §4.2), for servers
// written in tests and for checks.
func S256(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}
