package mcpoauth

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ResourceMetadata is the protected-resource metadata of an MCP server (RFC 9728).
type ResourceMetadata struct {
	Resource             string   `json:"resource"`
	AuthorizationServers []string `json:"authorization_servers"`
	ScopesSupported      []string `json:"scopes_supported,omitempty"`
}

// ServerMetadata is the authorization-server metadata (RFC 8414 / OIDC discovery).
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RegistrationEndpoint              string   `json:"registration_endpoint,omitempty"`
	RevocationEndpoint                string   `json:"revocation_endpoint,omitempty"`
	UserinfoEndpoint                  string   `json:"userinfo_endpoint,omitempty"`
	ScopesSupported                   []string `json:"scopes_supported,omitempty"`
	ResponseTypesSupported            []string `json:"response_types_supported,omitempty"`
	GrantTypesSupported               []string `json:"grant_types_supported,omitempty"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported,omitempty"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported,omitempty"`
	// IssParameterSupported: the server puts iss in every authorization
	// response (RFC 9207), so a callback without it is refused.
	IssParameterSupported bool `json:"authorization_response_iss_parameter_supported,omitempty"`
	// ClientIDMetadataDocumentSupported: the server accepts an https URL as
	// client id and fetches the client's metadata document from it (the
	// OAuth Client ID Metadata Document draft), so no registration is needed.
	ClientIDMetadataDocumentSupported bool `json:"client_id_metadata_document_supported,omitempty"`
	// DPoPSigningAlgValuesSupported: the server issues DPoP-bound tokens
	// (RFC 9449 5.1) to clients whose proofs use one of these algorithms.
	DPoPSigningAlgValuesSupported []string `json:"dpop_signing_alg_values_supported,omitempty"`
}

// Challenge is what a 401 from the MCP server says in WWW-Authenticate.
type Challenge struct {
	ResourceMetadata string // resource_metadata parameter
	Scope            string // scope parameter
}

// Discoverer fetches metadata with a policy-checked client.
type Discoverer struct {
	Policy Policy
	HTTP   *http.Client // nil: Policy.Client(15s)
}

func (d *Discoverer) client() *http.Client {
	if d.HTTP != nil {
		return d.HTTP
	}
	return d.Policy.Client(defaultTimeout)
}

// Probe sends an unauthenticated MCP initialize to the server and returns the
// challenge of its 401. A server that does not answer 401 yields an empty
// challenge (discovery then uses the well-known locations).
func (d *Discoverer) Probe(ctx context.Context, mcpURL string) (Challenge, error) {
	if _, err := d.Policy.Check(mcpURL); err != nil {
		return Challenge{}, err
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"guilds","version":"1"}}}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, mcpURL, bytes.NewReader(body))
	if err != nil {
		return Challenge{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := d.client().Do(req)
	if err != nil {
		return Challenge{}, fmt.Errorf("probe %s: %w", hostOf(mcpURL), err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != http.StatusUnauthorized {
		return Challenge{}, nil
	}
	return ParseChallenge(resp.Header.Values("WWW-Authenticate")), nil
}

// ParseChallenge reads the Bearer challenge parameters of WWW-Authenticate values.
func ParseChallenge(values []string) Challenge {
	var c Challenge
	for _, v := range values {
		params := authParams(v)
		if s, ok := params["resource_metadata"]; ok && c.ResourceMetadata == "" {
			c.ResourceMetadata = s
		}
		if s, ok := params["scope"]; ok && c.Scope == "" {
			c.Scope = s
		}
	}
	return c
}

// authParams parses `Bearer k="v", k2=v2` leniently (quoted values may hold commas).
func authParams(h string) map[string]string {
	out := map[string]string{}
	s := strings.TrimSpace(h)
	if i := strings.IndexByte(s, ' '); i > 0 && !strings.Contains(s[:i], "=") {
		s = s[i+1:]
	}
	for len(s) > 0 {
		s = strings.TrimLeft(s, " ,")
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			break
		}
		key := strings.ToLower(strings.TrimSpace(s[:eq]))
		s = s[eq+1:]
		var val string
		if strings.HasPrefix(s, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(s); i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
					b.WriteByte(s[i])
					continue
				}
				if s[i] == '"' {
					break
				}
				b.WriteByte(s[i])
			}
			val = b.String()
			if i < len(s) {
				s = s[i+1:]
			} else {
				s = ""
			}
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			val = strings.TrimSpace(s[:end])
			s = s[end:]
		}
		out[key] = val
	}
	return out
}

// wellKnown builds the RFC 8615 location of a document for a URL with a
// path: https://h/.well-known/name/path (path insertion), then the root one.
func wellKnown(raw, name string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		return nil
	}
	root := u.Scheme + "://" + u.Host + "/.well-known/" + name
	p := strings.TrimRight(u.EscapedPath(), "/")
	if p == "" {
		return []string{root}
	}
	return []string{root + p, root}
}

// Resource finds the protected-resource metadata of an MCP server: from the
// challenge's resource_metadata URL when there is one, else at the
// well-known locations. found is false when the server publishes none.
func (d *Discoverer) Resource(ctx context.Context, mcpURL string, ch Challenge) (md ResourceMetadata, found bool, err error) {
	candidates := wellKnown(mcpURL, "oauth-protected-resource")
	if ch.ResourceMetadata != "" {
		candidates = []string{ch.ResourceMetadata}
	}
	for _, c := range candidates {
		ok, err := d.getJSON(ctx, c, &md)
		if err != nil {
			return md, false, err
		}
		if !ok {
			continue
		}
		if len(md.AuthorizationServers) == 0 {
			return md, false, fmt.Errorf("protected-resource metadata of %s names no authorization server", hostOf(mcpURL))
		}
		if md.Resource != "" && !sameResource(md.Resource, mcpURL) {
			return md, false, fmt.Errorf("protected-resource metadata is for %q, not for %s", md.Resource, mcpURL)
		}
		return md, true, nil
	}
	return ResourceMetadata{}, false, nil
}

// sameResource accepts metadata whose resource is the MCP URL or a prefix of
// it on the same origin (a server may protect its whole origin).
func sameResource(resource, mcpURL string) bool {
	r, err1 := url.Parse(resource)
	m, err2 := url.Parse(mcpURL)
	if err1 != nil || err2 != nil {
		return false
	}
	if !strings.EqualFold(r.Scheme, m.Scheme) || !strings.EqualFold(r.Host, m.Host) {
		return false
	}
	rp := strings.TrimRight(r.Path, "/")
	return rp == "" || m.Path == rp || strings.HasPrefix(m.Path, rp+"/")
}

// AuthServer fetches an authorization server's metadata: RFC 8414 first, then
// OpenID Connect discovery (path insertion and path appending).
func (d *Discoverer) AuthServer(ctx context.Context, issuer string) (ServerMetadata, error) {
	candidates := []string{
		wellKnown(issuer, "oauth-authorization-server")[0],
		wellKnown(issuer, "openid-configuration")[0],
		strings.TrimRight(issuer, "/") + "/.well-known/openid-configuration",
	}
	seen := map[string]bool{}
	for _, c := range candidates {
		if seen[c] {
			continue
		}
		seen[c] = true
		var md ServerMetadata
		ok, err := d.getJSON(ctx, c, &md)
		if err != nil {
			return md, err
		}
		if !ok {
			continue
		}
		if err := d.checkServer(issuer, &md); err != nil {
			return md, err
		}
		return md, nil
	}
	return ServerMetadata{}, fmt.Errorf("authorization server %s publishes no metadata (RFC 8414 or OpenID Connect discovery)", hostOf(issuer))
}

func (d *Discoverer) checkServer(issuer string, md *ServerMetadata) error {
	if md.Issuer != "" && strings.TrimRight(md.Issuer, "/") != strings.TrimRight(issuer, "/") {
		return fmt.Errorf("authorization server metadata names issuer %q, expected %q", md.Issuer, issuer)
	}
	if md.AuthorizationEndpoint == "" || md.TokenEndpoint == "" {
		return fmt.Errorf("authorization server %s metadata lacks an authorization or token endpoint", hostOf(issuer))
	}
	for _, e := range []string{md.AuthorizationEndpoint, md.TokenEndpoint, md.RegistrationEndpoint, md.RevocationEndpoint, md.UserinfoEndpoint} {
		if e == "" {
			continue
		}
		if _, err := d.Policy.Check(e); err != nil {
			return err
		}
	}
	if len(md.CodeChallengeMethodsSupported) > 0 && !slices.Contains(md.CodeChallengeMethodsSupported, "S256") {
		return fmt.Errorf("authorization server %s does not support S256 PKCE", hostOf(issuer))
	}
	return nil
}

// getJSON fetches a metadata document; ok is false on 404 (and other 4xx), so
// the caller tries the next location.
func (d *Discoverer) getJSON(ctx context.Context, raw string, v any) (bool, error) {
	if _, err := d.Policy.Check(raw); err != nil {
		return false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, raw, nil)
	if err != nil {
		return false, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := d.client().Do(req)
	if err != nil {
		return false, fmt.Errorf("metadata %s: %w", hostOf(raw), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 && resp.StatusCode < 500 {
		return false, nil
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("metadata %s: HTTP %d", hostOf(raw), resp.StatusCode)
	}
	dec := json.NewDecoder(io.LimitReader(resp.Body, 1<<20))
	if err := dec.Decode(v); err != nil {
		return false, fmt.Errorf("metadata %s: malformed JSON", hostOf(raw))
	}
	return true, nil
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "?"
	}
	return u.Host
}

// ErrNoRegistration: the server has no registration endpoint (RFC 7591).
var ErrNoRegistration = errors.New("the authorization server offers no dynamic client registration")
