package mcpconformance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/guilds/guilds/internal/mcpoauth"
)

// PreRegistered is a client the authorization server already knows.
type PreRegistered struct {
	ClientID     string
	ClientSecret string
}

// PrepareInput says what to prepare a login for.
type PrepareInput struct {
	MCPURL      string
	RedirectURI string
	ClientName  string
	// Challenge is the server's last 401/403 challenge (may be empty).
	Challenge Challenge
	// Client, when set, is used instead of registering one.
	Client *PreRegistered
	// ClientMetadataURL is this client's metadata document URL; it is used as
	// the client id when the server supports client ID metadata documents.
	ClientMetadataURL string
	// Config is the catalog row config so far; a client registered for the
	// same redirect URI is kept.
	Config json.RawMessage
}

// Prepared is the catalog row config to store and what it holds.
type Prepared struct {
	Config   json.RawMessage
	OAuth    mcpoauth.OAuthConfig
	Resource string
	// Fallback: the server publishes no metadata and the 2025-03-26 default
	// endpoints at its origin are used.
	Fallback bool
}

// Prepare discovers the server's authorization metadata and client, like
// mcpoauth.Discoverer.Prepare, but takes the scope from the challenge the
// caller observed (step-up), falls back to the default endpoints of servers
// without metadata, and uses a pre-registered or URL-based client id when
// given one. d.HTTP is replaced by a wrapper of its client for the call.
func Prepare(ctx context.Context, d mcpoauth.Discoverer, in PrepareInput) (Prepared, error) {
	sniff := &sniffer{next: d.HTTP}
	if sniff.next == nil {
		sniff.next = d.Policy.Client(0)
	}
	d.HTTP = &http.Client{Transport: sniff, Timeout: sniff.next.Timeout, CheckRedirect: sniff.next.CheckRedirect}

	row := map[string]json.RawMessage{}
	if len(in.Config) > 0 {
		if err := json.Unmarshal(in.Config, &row); err != nil {
			return Prepared{}, errors.New("catalog config is not a JSON object")
		}
	}
	var cur mcpoauth.OAuthConfig
	if raw, ok := row["oauth"]; ok {
		_ = json.Unmarshal(raw, &cur)
	}

	prm, found, err := d.Resource(ctx, in.MCPURL, in.Challenge.Challenge)
	if err != nil {
		return Prepared{}, err // a resource mismatch ends here, before any authorization request
	}
	origin := mcpoauth.Origin(in.MCPURL)
	issuer, resource := origin, in.MCPURL
	if found {
		issuer = prm.AuthorizationServers[0]
		if prm.Resource != "" {
			resource = prm.Resource
		}
	}
	if _, err := d.Policy.Check(issuer); err != nil {
		return Prepared{}, err
	}
	out := Prepared{Resource: resource}
	md, err := d.AuthServer(ctx, issuer)
	if err != nil {
		if found {
			return Prepared{}, err
		}
		// A server of the 2025-03-26 revision without any metadata: its
		// origin serves /authorize, /token and /register.
		md = mcpoauth.ServerMetadata{AuthorizationEndpoint: origin + "/authorize", TokenEndpoint: origin + "/token",
			RegistrationEndpoint: origin + "/register"}
		out.Fallback = true
	}

	next := mcpoauth.OAuthConfig{AuthURL: md.AuthorizationEndpoint, TokenURL: md.TokenEndpoint,
		RevokeURL: md.RevocationEndpoint, UserinfoURL: md.UserinfoEndpoint, Issuer: issuer}
	switch {
	case in.Challenge.Scope != "":
		next.Scopes = strings.Fields(in.Challenge.Scope)
	case found && len(prm.ScopesSupported) > 0:
		next.Scopes = prm.ScopesSupported
	}

	switch {
	case in.Client != nil && in.Client.ClientID != "":
		next.ClientID, next.ClientSecret = in.Client.ClientID, in.Client.ClientSecret
		next.AuthStyle = mcpoauth.ChooseAuthStyle(md.TokenEndpointAuthMethodsSupported, next.ClientSecret != "")
	case in.ClientMetadataURL != "" && sniff.cimdSupported(md.AuthorizationEndpoint):
		next.ClientID, next.AuthStyle = in.ClientMetadataURL, "none"
	case cur.Registered && cur.ClientID != "" && cur.RedirectURI == in.RedirectURI && cur.TokenURL == md.TokenEndpoint && cur.Issuer == issuer:
		// A client is kept only at the authorization server that registered
		// it: one the resource moved to gets a registration of its own.
		next.ClientID, next.ClientSecret, next.AuthStyle = cur.ClientID, cur.ClientSecret, cur.AuthStyle
		next.Registered, next.RedirectURI = true, cur.RedirectURI
	case md.RegistrationEndpoint != "":
		rc, err := d.Register(ctx, md, in.ClientName, in.RedirectURI, strings.Join(next.Scopes, " "))
		if err != nil {
			return Prepared{}, err
		}
		next.ClientID, next.ClientSecret, next.Registered, next.RedirectURI = rc.ClientID, rc.ClientSecret, true, in.RedirectURI
		next.AuthStyle = mcpoauth.AuthStyleOf(rc.TokenEndpointAuthMethod)
	default:
		return Prepared{}, fmt.Errorf("authorization server %s offers no client registration and no client is configured", hostOf(issuer))
	}

	expectIssuer(in.RedirectURI, issuer, md.IssParameterSupported)
	oa, _ := json.Marshal(next) //nolint:gosec // G117: the row is catalog config; its writer seals client_secret (connectors.SealCatalogSecrets) before it is stored
	row["oauth"] = oa
	row["provider"] = json.RawMessage(`"oauth2"`)
	rs, _ := json.Marshal(resource)
	row["resource"] = rs
	out.Config, _ = json.Marshal(row)
	out.OAuth = next
	return out, nil
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "?"
	}
	return u.Host
}

// sniffer keeps the authorization-server metadata documents that pass
// through it, for the fields mcpoauth.ServerMetadata does not carry.
type sniffer struct {
	next *http.Client
	mu   sync.Mutex
	docs []map[string]any
}

func (s *sniffer) RoundTrip(req *http.Request) (*http.Response, error) {
	tr := s.next.Transport
	if tr == nil {
		tr = http.DefaultTransport
	}
	resp, err := tr.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet || resp.StatusCode != http.StatusOK || !strings.Contains(req.URL.Path, "/.well-known/") {
		return resp, err
	}
	body, rerr := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_ = resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	var doc map[string]any
	if rerr == nil && json.Unmarshal(body, &doc) == nil {
		if _, ok := doc["authorization_endpoint"]; ok {
			s.mu.Lock()
			s.docs = append(s.docs, doc)
			s.mu.Unlock()
		}
	}
	return resp, nil
}

// cimdSupported reports whether the metadata naming this authorization
// endpoint advertises client ID metadata documents.
func (s *sniffer) cimdSupported(authEndpoint string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, d := range s.docs {
		if d["authorization_endpoint"] == authEndpoint && d["client_id_metadata_document_supported"] == true {
			return true
		}
	}
	return false
}
