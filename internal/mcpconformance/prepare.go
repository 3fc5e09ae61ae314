package mcpconformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

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
// given one. The client itself is picked as the platform picks it
// (mcpoauth.Discoverer.Client: the document URL where the server accepts
// client ID metadata documents, else the registration kept for this
// authorization server and redirect URI, else a new one).
func Prepare(ctx context.Context, d mcpoauth.Discoverer, in PrepareInput) (Prepared, error) {
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
		RevokeURL: md.RevocationEndpoint, UserinfoURL: md.UserinfoEndpoint, Issuer: issuer, DPoPAlgs: md.DPoPSigningAlgValuesSupported}
	switch {
	case in.Challenge.Scope != "":
		next.Scopes = mcpoauth.ChallengedScopes(cur.Scopes, cur.Issuer, issuer, in.Challenge.Scope)
	case found && len(prm.ScopesSupported) > 0:
		next.Scopes = prm.ScopesSupported
	}

	switch {
	case in.Client != nil && in.Client.ClientID != "":
		next.ClientID, next.ClientSecret = in.Client.ClientID, in.Client.ClientSecret
		next.AuthStyle = mcpoauth.ChooseAuthStyle(md.TokenEndpointAuthMethodsSupported, next.ClientSecret != "")
	default:
		c, err := d.Client(ctx, cur, md, mcpoauth.ClientRequest{Issuer: issuer, RedirectURI: in.RedirectURI, ClientName: in.ClientName,
			Scope: strings.Join(next.Scopes, " "), MetadataURL: in.ClientMetadataURL})
		if errors.Is(err, mcpoauth.ErrNoRegistration) {
			return Prepared{}, fmt.Errorf("authorization server %s offers no client registration and no client is configured", hostOf(issuer))
		}
		if err != nil {
			return Prepared{}, err
		}
		next.Registrations, next.ClientID, next.ClientSecret, next.AuthStyle = c.Registrations, c.ClientID, c.ClientSecret, c.AuthStyle
		next.Registered, next.RedirectURI = c.Registered, c.RedirectURI
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
