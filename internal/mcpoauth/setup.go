package mcpoauth

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// OAuthConfig is the "oauth" object of a catalog row's config, as the
// generic OAuth provider (internal/connectors/providers/oauthgeneric) reads
// it, plus what this package needs to know whether to register again.
type OAuthConfig struct {
	AuthURL      string   `json:"auth_url,omitempty"`
	TokenURL     string   `json:"token_url,omitempty"`
	RevokeURL    string   `json:"revoke_url,omitempty"`
	ClientID     string   `json:"client_id,omitempty"`
	ClientSecret string   `json:"client_secret,omitempty"`
	AuthStyle    string   `json:"auth_style,omitempty"` // basic, post or none
	Scopes       []string `json:"scopes,omitempty"`
	// RedirectURI is the redirect URI the client was registered for; a
	// client registered by this package for another URI is registered again.
	RedirectURI string `json:"redirect_uri,omitempty"`
	// Registered marks a client this package registered (RFC 7591), as
	// opposed to one the admin configured.
	Registered  bool   `json:"registered,omitempty"`
	UserinfoURL string `json:"userinfo_url,omitempty"`
	Issuer      string `json:"issuer,omitempty"`
	// Registrations holds every client this package registered, by
	// authorization server and redirect URI (RegistrationKey): a login
	// through one redirect URI (a Host spelling, a former PUBLIC_BASE_URL)
	// never replaces the client of another, whose logins keep refreshing
	// with it, and a server that moves to another authorization server gets
	// a client there instead of sending it the former server's client id.
	Registrations map[string]Registration `json:"registrations,omitempty"`
	// DPoPAlgs is the authorization server's dpop_signing_alg_values_supported:
	// when it lists ES256, logins are DPoP-bound (internal/dpop).
	DPoPAlgs []string `json:"dpop_signing_alg_values_supported,omitempty"`
	// IssParameterSupported is the authorization server's promise to put
	// iss in every authorization response (RFC 9207): a callback without
	// one is then refused.
	IssParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`
}

// Registration is a client of one authorization server for one redirect URI.
type Registration struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	AuthStyle    string `json:"auth_style,omitempty"`
	// Issuer is the authorization server the client belongs to. An entry
	// written before it was kept has none and belongs to the row's Issuer
	// of that time; Prepare writes that issuer into it before the row names
	// another one.
	Issuer string `json:"issuer,omitempty"`
	// Document: ClientID is the platform's client ID metadata document URL,
	// used because the server accepts such documents, not a registration.
	Document bool `json:"metadata_document,omitempty"`
}

// RegistrationKey is the key of the client of (issuer, redirectURI) in
// OAuthConfig.Registrations: the issuer, a space (which no URL holds) and
// the redirect URI. Keys written before clients were kept per issuer are
// the redirect URI alone.
func RegistrationKey(issuer, redirectURI string) string {
	if issuer == "" {
		return redirectURI
	}
	return issuer + " " + redirectURI
}

// SplitRegistrationKey reads a key of OAuthConfig.Registrations back into
// the issuer and redirect URI of its client: a key of the older form (the
// redirect URI alone) belongs to r.Issuer, else to rowIssuer.
func SplitRegistrationKey(key string, r Registration, rowIssuer string) (issuer, redirectURI string) {
	if i, u, ok := strings.Cut(key, " "); ok {
		return i, u
	}
	if r.Issuer != "" {
		return r.Issuer, key
	}
	return rowIssuer, key
}

// Registration returns the client the row holds for (issuer, redirectURI).
func (o OAuthConfig) Registration(issuer, redirectURI string) (Registration, bool) {
	if r, ok := o.Registrations[RegistrationKey(issuer, redirectURI)]; ok {
		return r, true
	}
	if r, ok := o.Registrations[redirectURI]; ok {
		if i, _ := SplitRegistrationKey(redirectURI, r, o.Issuer); i == issuer {
			return r, true
		}
	}
	return Registration{}, false
}

// Prepared is the outcome of Prepare.
type Prepared struct {
	Config  json.RawMessage // the whole catalog row config, updated
	Changed bool            // Config differs from the input and must be stored
	OAuth   OAuthConfig
}

// Prepare makes a catalog row ready for an authorization URL: it discovers
// the server's metadata, keeps an admin-configured client, or picks the
// client of this authorization server and redirect URI (Client: the
// platform's client ID metadata document when the server accepts one and
// the redirect URI is the platform's, a stored registration, else a new
// RFC 7591 registration), and returns the row config with "provider",
// "oauth" and "resource" set. An admin-configured client of another
// authorization server than the one the resource names now is refused.
// Keys of the config it does not know are kept.
func (d *Discoverer) Prepare(ctx context.Context, mcpURL, redirectURI, clientName string, config json.RawMessage) (Prepared, error) {
	row := map[string]json.RawMessage{}
	if len(config) > 0 {
		if err := json.Unmarshal(config, &row); err != nil {
			return Prepared{}, fmt.Errorf("catalog config is not a JSON object")
		}
	}
	var cur OAuthConfig
	if raw, ok := row["oauth"]; ok {
		_ = json.Unmarshal(raw, &cur)
	}
	if _, err := url.Parse(redirectURI); err != nil || redirectURI == "" {
		return Prepared{}, fmt.Errorf("bad redirect URI %q", redirectURI)
	}
	ch, err := d.Probe(ctx, mcpURL)
	if err != nil {
		return Prepared{}, err
	}
	prm, found, err := d.Resource(ctx, mcpURL, ch)
	if err != nil {
		return Prepared{}, err
	}
	issuer := Origin(mcpURL) // servers without RFC 9728 metadata: the MCP origin is the issuer
	resource := mcpURL
	if found {
		issuer = prm.AuthorizationServers[0]
		if prm.Resource != "" {
			resource = prm.Resource
		}
	}
	if _, err := d.Policy.Check(issuer); err != nil {
		return Prepared{}, err
	}
	md, err := d.AuthServer(ctx, issuer)
	if err != nil {
		return Prepared{}, err
	}
	next := cur
	next.AuthURL, next.TokenURL, next.RevokeURL = md.AuthorizationEndpoint, md.TokenEndpoint, md.RevocationEndpoint
	next.UserinfoURL, next.Issuer = md.UserinfoEndpoint, issuer
	next.DPoPAlgs = md.DPoPSigningAlgValuesSupported
	next.IssParameterSupported = md.IssParameterSupported
	switch {
	case ch.Scope != "":
		next.Scopes = ChallengedScopes(cur.Scopes, cur.Issuer, issuer, ch.Scope)
	case found && len(prm.ScopesSupported) > 0:
		next.Scopes = prm.ScopesSupported
	case !cur.Registered && len(cur.Scopes) > 0:
	default:
		next.Scopes = nil
	}
	adminClient := cur.ClientID != "" && !cur.Registered
	if adminClient && cur.Issuer != "" && cur.Issuer != issuer {
		// The admin's client belongs to the former server: never sent to the new one.
		return Prepared{}, fmt.Errorf("the server now names authorization server %s, but the client configured for it belongs to %s: set config.oauth.client_id and issuer for the new server in the catalog",
			hostOf(issuer), hostOf(cur.Issuer))
	}
	if !adminClient {
		c, err := d.Client(ctx, cur, md, ClientRequest{Issuer: issuer, RedirectURI: redirectURI, ClientName: clientName,
			Scope: strings.Join(next.Scopes, " "), MetadataURL: ClientMetadataURL(redirectURI)})
		if err != nil {
			return Prepared{}, err
		}
		next.Registrations, next.ClientID, next.ClientSecret, next.AuthStyle = c.Registrations, c.ClientID, c.ClientSecret, c.AuthStyle
		next.Registered, next.RedirectURI = c.Registered, c.RedirectURI
	} else if next.AuthStyle == "" {
		next.AuthStyle = ChooseAuthStyle(md.TokenEndpointAuthMethodsSupported, next.ClientSecret != "")
	}
	oa, _ := json.Marshal(next) //nolint:gosec // G117: the row is catalog config; its writer seals client_secret (connectors.SealCatalogSecrets) before it is stored
	row["oauth"] = oa
	row["provider"] = json.RawMessage(`"oauth2"`)
	rs, _ := json.Marshal(resource)
	row["resource"] = rs
	out, _ := json.Marshal(row)
	return Prepared{Config: out, Changed: !jsonEqual(config, out), OAuth: next}, nil
}

// AuthStyleOf maps a token_endpoint_auth_method to the provider's auth_style.
func AuthStyleOf(method string) string {
	switch method {
	case "client_secret_basic":
		return "basic"
	case "client_secret_post":
		return "post"
	default:
		return "none"
	}
}

// ChooseAuthStyle picks how a client authenticates at the token endpoint
// from what the server supports.
func ChooseAuthStyle(supported []string, hasSecret bool) string {
	if !hasSecret {
		return "none"
	}
	if len(supported) == 0 || slices.Contains(supported, "client_secret_basic") {
		return "basic"
	}
	if slices.Contains(supported, "client_secret_post") {
		return "post"
	}
	return "none"
}

// Origin is the scheme and host of a URL (the URL itself when it does not parse).
func Origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return u.Scheme + "://" + u.Host
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}
