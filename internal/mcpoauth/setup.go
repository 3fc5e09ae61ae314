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
	// Registrations holds every client this package registered, by redirect
	// URI: a login through one redirect URI (a Host spelling, a former
	// PUBLIC_BASE_URL) never replaces the client of another, whose logins
	// keep refreshing with it.
	Registrations map[string]Registration `json:"registrations,omitempty"`
}

// Registration is a client registered for one redirect URI.
type Registration struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret,omitempty"`
	AuthStyle    string `json:"auth_style,omitempty"`
}

// Prepared is the outcome of Prepare.
type Prepared struct {
	Config  json.RawMessage // the whole catalog row config, updated
	Changed bool            // Config differs from the input and must be stored
	OAuth   OAuthConfig
}

// Prepare makes a catalog row ready for an authorization URL: it discovers
// the server's metadata, keeps an admin-configured client or a client
// registered for this redirect URI, registers a new public client otherwise,
// and returns the row config with "provider", "oauth" and "resource" set.
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
	switch {
	case ch.Scope != "":
		next.Scopes = strings.Fields(ch.Scope)
	case found && len(prm.ScopesSupported) > 0:
		next.Scopes = prm.ScopesSupported
	case !cur.Registered && len(cur.Scopes) > 0:
	default:
		next.Scopes = nil
	}
	adminClient := cur.ClientID != "" && !cur.Registered
	if !adminClient {
		next.Registrations = map[string]Registration{}
		for uri, r := range cur.Registrations {
			next.Registrations[uri] = r
		}
		// A row from before registrations were kept per redirect URI.
		if _, ok := next.Registrations[cur.RedirectURI]; !ok && cur.ClientID != "" && cur.RedirectURI != "" {
			next.Registrations[cur.RedirectURI] = Registration{cur.ClientID, cur.ClientSecret, cur.AuthStyle}
		}
		reg, ok := next.Registrations[redirectURI]
		if !ok {
			rc, err := d.Register(ctx, md, clientName, redirectURI, strings.Join(next.Scopes, " "))
			if err != nil {
				return Prepared{}, err
			}
			reg = Registration{rc.ClientID, rc.ClientSecret, AuthStyleOf(rc.TokenEndpointAuthMethod)}
			next.Registrations[redirectURI] = reg
		}
		// The top-level client is the one of the latest redirect URI, for
		// readers that know no registrations.
		next.ClientID, next.ClientSecret, next.AuthStyle = reg.ClientID, reg.ClientSecret, reg.AuthStyle
		next.Registered, next.RedirectURI = true, redirectURI
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
