package mcpoauth

import (
	"context"
	"net"
	"net/url"
	"strings"
)

// ClientRequest says which client one login needs.
type ClientRequest struct {
	Issuer      string // the authorization server the login goes to
	RedirectURI string
	ClientName  string // sent with a registration
	Scope       string // space separated, sent with a registration
	// MetadataURL is the client ID metadata document URL to use as client
	// id where the server accepts such documents; "" for none.
	MetadataURL string
}

// Client picks the client of a login at the authorization server md
// describes and returns cur with it recorded in Registrations and copied to
// the top-level client fields (for readers that know no registrations):
//
//   - the document URL, when the server advertises
//     client_id_metadata_document_supported and req has one;
//   - else the registration the row holds for (issuer, redirect URI), unless
//     it is a document client the server no longer accepts;
//   - else a new RFC 7591 registration at the server.
//
// A client is never taken from another authorization server: when the
// protected resource names a new one, the former server's clients stay in
// Registrations (a move back finds them) and the new one gets its own.
// Entries written before clients were kept per issuer are given the issuer
// they belong to, cur's former Issuer, so that the stored row keeps saying
// so once it names the new one.
func (d *Discoverer) Client(ctx context.Context, cur OAuthConfig, md ServerMetadata, req ClientRequest) (OAuthConfig, error) {
	next := cur
	next.Registrations = carryRegistrations(cur, md)
	key := RegistrationKey(req.Issuer, req.RedirectURI)
	held := next
	held.Issuer = req.Issuer
	reg, ok := held.Registration(req.Issuer, req.RedirectURI)
	switch {
	case req.MetadataURL != "" && md.ClientIDMetadataDocumentSupported:
		reg = Registration{ClientID: req.MetadataURL, AuthStyle: "none", Issuer: req.Issuer, Document: true}
	case ok && !reg.Document:
	default:
		rc, err := d.Register(ctx, md, req.ClientName, req.RedirectURI, req.Scope)
		if err != nil {
			return OAuthConfig{}, err
		}
		reg = Registration{ClientID: rc.ClientID, ClientSecret: rc.ClientSecret, AuthStyle: AuthStyleOf(rc.TokenEndpointAuthMethod), Issuer: req.Issuer}
	}
	if reg.Issuer == "" {
		reg.Issuer = req.Issuer
	}
	// A key of the older form for this redirect URI is rewritten in place
	// when it is this server's client, so one client has one entry.
	if old, has := next.Registrations[req.RedirectURI]; has && key != req.RedirectURI && old.Issuer == req.Issuer {
		key = req.RedirectURI
	}
	next.Registrations[key] = reg
	next.ClientID, next.ClientSecret, next.AuthStyle = reg.ClientID, reg.ClientSecret, reg.AuthStyle
	next.Registered, next.RedirectURI = true, req.RedirectURI
	return next, nil
}

// carryRegistrations copies cur's registrations with the issuer of each
// entry of the older form written into it, adding the row's top-level
// client when it predates Registrations. An entry's issuer is cur's Issuer;
// a row from before issuers were recorded names none, and its clients are
// then the current server's when the token endpoint is unchanged, else the
// former token endpoint's origin's (never the new server's).
func carryRegistrations(cur OAuthConfig, md ServerMetadata) map[string]Registration {
	former := cur.Issuer
	if former == "" && cur.TokenURL != "" && cur.TokenURL != md.TokenEndpoint {
		former = Origin(cur.TokenURL)
	} else if former == "" {
		former = md.Issuer
	}
	regs := make(map[string]Registration, len(cur.Registrations)+1)
	for k, r := range cur.Registrations {
		if r.Issuer == "" && !strings.Contains(k, " ") {
			r.Issuer = former
		}
		regs[k] = r
	}
	if cur.Registered && cur.ClientID != "" && cur.RedirectURI != "" {
		held := cur
		held.Registrations, held.Issuer = regs, former
		if _, ok := held.Registration(former, cur.RedirectURI); !ok {
			regs[RegistrationKey(former, cur.RedirectURI)] = Registration{ClientID: cur.ClientID, ClientSecret: cur.ClientSecret,
				AuthStyle: cur.AuthStyle, Issuer: former}
		}
	}
	return regs
}

// ClientMetadataPath is where the platform serves its client ID metadata
// document, under its public base URL.
const ClientMetadataPath = "/oauth/client-metadata.json"

// CallbackPath is the platform's OAuth redirect path under its public base
// URL (the API's callback route, api.CallbackPath).
const CallbackPath = "/api/mcp/oauth/callback"

// ClientMetadataURL is the client ID metadata document URL that goes with a
// redirect URI of the platform (its public base URL, then CallbackPath): the
// same base, then ClientMetadataPath. It is "" for any other redirect URI,
// and for a base an authorization server could not fetch the document from
// as the draft requires: one that is neither https nor http on a loopback
// address (development).
func ClientMetadataURL(redirectURI string) string {
	u, err := url.Parse(redirectURI)
	if err != nil || u.RawQuery != "" || u.Fragment != "" || u.User != nil || u.Host == "" {
		return ""
	}
	base, ok := strings.CutSuffix(u.EscapedPath(), CallbackPath)
	if !ok {
		return ""
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && loopbackName(u.Hostname()):
	default:
		return ""
	}
	return u.Scheme + "://" + u.Host + base + ClientMetadataPath
}

func loopbackName(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// ClientDocument is a client ID metadata document (the OAuth Client ID
// Metadata Document draft that MCP uses): the client's metadata, served at
// the URL that is its client id.
type ClientDocument struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	ApplicationType         string   `json:"application_type"`
}

// NewClientDocument is the platform's document for a redirect URI of the
// platform: a public client (PKCE, no secret) redirecting there, whose
// client id is ClientMetadataURL(redirectURI). ok is false when that URL is
// "" (the redirect URI is not one a document can be served for).
func NewClientDocument(redirectURI, clientName string) (doc ClientDocument, ok bool) {
	id := ClientMetadataURL(redirectURI)
	if id == "" {
		return ClientDocument{}, false
	}
	return ClientDocument{ClientID: id, ClientName: clientName, RedirectURIs: []string{redirectURI},
		GrantTypes: []string{"authorization_code", "refresh_token"}, ResponseTypes: []string{"code"},
		TokenEndpointAuthMethod: "none", ApplicationType: ApplicationType(redirectURI)}, true
}
