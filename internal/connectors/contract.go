// Package connectors is the connector engine: the provider contract and
// registry, the encrypted token store, the call-time credential resolver, the
// OAuth connect flow, connection health and the injection of credentials on
// the transport's channel.
//
// Providers are plugins (one package each under providers/) that register
// themselves with Register from init. The engine knows nothing provider
// specific: a catalog row (mcp_servers) names its provider and sub-service,
// and the engine asks that provider to authorise, exchange, refresh, revoke,
// validate or inject.
//
// The hot path, (*Resolver).Token for a fresh credential, takes no lock and
// allocates nothing. See docs/adr/0202-refresh-coordination.md for how a stale
// credential is refreshed once across every replica.
package connectors

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/integrations"
)

// ProviderID names a provider plugin, e.g. "google" or "oauth2".
type ProviderID string

// SubService names one service of a provider that shares the provider's client,
// e.g. "gmail" and "drive" of "google". Empty when the provider has one service.
type SubService string

// Ref is how a manifest names a managed connector: provider plus sub-service,
// written "google/gmail" (or just "notion").
type Ref struct {
	Provider   ProviderID
	SubService SubService
}

// ParseRef parses "provider" or "provider/sub-service".
func ParseRef(s string) (Ref, error) {
	p, sub, _ := strings.Cut(strings.TrimSpace(s), "/")
	if p == "" || strings.Contains(sub, "/") {
		return Ref{}, fmt.Errorf("connectors: bad connector reference %q (want provider or provider/sub-service)", s)
	}
	return Ref{Provider: ProviderID(p), SubService: SubService(sub)}, nil
}

func (r Ref) String() string {
	if r.SubService == "" {
		return string(r.Provider)
	}
	return string(r.Provider) + "/" + string(r.SubService)
}

// AuthKind is the auth column of a catalog row (catalog.Auth).
type AuthKind = catalog.Auth

// Auth kinds, as catalog names them.
const (
	AuthNone  = catalog.AuthNone
	AuthToken = catalog.AuthToken
	AuthOAuth = catalog.AuthOAuth
)

// ConnStatus is a login's status (connstore.Status).
type ConnStatus = connstore.Status

// Login statuses, as connstore names them.
const (
	StatusPending      = connstore.StatusPending
	StatusConnected    = connstore.StatusConnected
	StatusDisconnected = connstore.StatusDisconnected
)

// Connection is one login for one catalog server, as the engine sees it.
type Connection struct {
	ID          uuid.UUID
	ServerID    uuid.UUID
	ServerSlug  string
	ServerName  string
	Auth        AuthKind
	Transport   string // http, sse or stdio
	URL         string
	OwnerScope  string
	OwnerID     *uuid.UUID
	Status      ConnStatus
	AccountHint string
	Ref         Ref // provider and sub-service, from the catalog row
	Health      Health
}

// Credential is what a connection authenticates with. It is a value: the
// resolver hands out copies of an immutable snapshot, so callers must treat
// Extra as read-only. Printing or logging a Credential never shows its values.
type Credential struct {
	AccessToken  string
	RefreshToken string
	TokenType    string    // "Bearer" when empty
	Expiry       time.Time // zero: does not expire (API keys, configuration)
	// Extra holds provider-defined fields: API key parts, configured headers
	// or environment values, provider token response extras.
	Extra map[string]string
	// Client is the OAuth client the grant was issued to (nil for API keys
	// and logins stored before it was kept); read-only.
	Client *OAuthClient
	// DPoPKey is the private JWK (internal/dpop) of a login whose
	// authorization server takes DPoP proofs (RFC 9449): its token requests
	// carry proofs of it, and when TokenType is "DPoP" (DPoPBound) so does
	// every request to the resource. "" for every other login. A secret
	// like RefreshToken: sealed with the credential, never sent anywhere.
	DPoPKey string
}

// DPoPBound reports whether the access token is bound to DPoPKey: it is
// sent as "Authorization: DPoP <token>" with a fresh proof on each request.
func (c Credential) DPoPBound() bool {
	return c.DPoPKey != "" && strings.EqualFold(c.TokenType, "DPoP")
}

// OAuthClient is the client an OAuth login was granted to, sealed with the
// credential: the login refreshes and revokes with it, so a catalog row that
// later registers another client (another redirect URI) orphans nothing.
type OAuthClient struct {
	ClientID     string `json:"id"`
	ClientSecret string `json:"secret,omitempty"`
	AuthStyle    string `json:"style,omitempty"` // basic, post, none or "" (auto)
	TokenURL     string `json:"token_url"`
	RevokeURL    string `json:"revoke_url,omitempty"`
	Issuer       string `json:"issuer,omitempty"`
	RedirectURI  string `json:"redirect_uri,omitempty"`
}

// String hides every value.
func (c Credential) String() string {
	dpopKey := ""
	if c.DPoPKey != "" {
		dpopKey = " dpop:set"
	}
	return fmt.Sprintf("connectors.Credential{access:%s refresh:%s%s expiry:%s extra:%d fields}",
		present(c.AccessToken), present(c.RefreshToken), dpopKey, c.Expiry.Format(time.RFC3339), len(c.Extra))
}

// Format makes every fmt verb use String, so %v, %+v and %#v cannot leak.
func (c Credential) Format(f fmt.State, _ rune) { _, _ = fmt.Fprint(f, c.String()) }

// LogValue makes slog print the redacted form.
func (c Credential) LogValue() slog.Value { return slog.StringValue(c.String()) }

// MarshalJSON refuses to serialise values by accident; the token store uses
// its own encoding before encrypting.
func (c Credential) MarshalJSON() ([]byte, error) { return json.Marshal(c.String()) }

func present(s string) string {
	if s == "" {
		return "none"
	}
	return "set"
}

// Injection is how a credential travels to the remote side. Maps are shared
// and read-only.
type Injection struct {
	Headers map[string]string // HTTP request headers
	Env     map[string]string // environment of a stdio server process
	Meta    map[string]any    // _meta fields of MCP requests to a stdio server
}

// MetaTokenField is the _meta key carrying the token for a stdio MCP server.
const MetaTokenField = "token"

// ExtraAccountHint is the Credential.Extra key an OAuth provider's Exchange
// may set to a display value from the token response (Notion's
// email_domain). CompleteOAuth moves it to the connection's account_hint and
// removes it from the credential before sealing, so every stored Extra value
// stays a secret (the run's redaction set is built from them; only the
// fields a ConfigProvider declares non-secret are left out of it).
const ExtraAccountHint = "account_hint"

// Provider is the base of every plugin.
type Provider interface {
	ID() ProviderID
}

// SubServices is implemented by providers that group several services under one client.
type SubServices interface {
	SubServices() []SubService
}

// ProviderConfig is what a Configurer receives for one catalog row.
type ProviderConfig struct {
	Server     string          // catalog slug
	SubService SubService      // from the catalog row
	Config     json.RawMessage // mcp_servers.config
	Getenv     func(string) string
	// Integrations is the box's integrations registry: a provider that
	// serves one (the Google client) asks it for its variables.
	Integrations *integrations.Registry
	HTTPClient   *http.Client // used for provider calls; nil means a default with timeouts
}

// Configurer is implemented by providers whose settings come from the catalog
// row or the environment (client ids, endpoints). The engine calls Configure
// once per catalog row and uses the returned provider for its connections; a
// provider may return one shared instance for several rows (one client for
// Gmail and Drive).
type Configurer interface {
	Configure(ProviderConfig) (Provider, error)
}

// EnvVars is implemented by providers configured through the environment; any
// of these variables being set means connectors are in use.
type EnvVars interface {
	EnvVars() []string
}

// AuthRequest is the input of an authorization URL.
type AuthRequest struct {
	SubService  SubService
	State       string // opaque, single use
	Verifier    string // PKCE verifier; the provider sends its S256 challenge
	RedirectURL string
	Resource    string // RFC 8707 resource indicator, when the server has one
}

// ExchangeRequest is the input of a code exchange.
type ExchangeRequest struct {
	SubService  SubService
	Code        string
	Verifier    string
	RedirectURL string
	Resource    string
	// DPoPKey, when set, is the private JWK the code exchange proves
	// possession of (generated by BeginOAuth when the authorization server
	// advertises ES256 DPoP proofs); the provider keeps it in the credential.
	DPoPKey string
}

// ErrorClass is a provider's verdict on a failed token request. Code is safe
// to log and store: an OAuth error code or a short description such as
// "http_503", "timeout" or "malformed_response", never a response body.
type ErrorClass struct {
	Permanent bool // the login is dead: reconnect required
	Code      string
}

// OAuthProvider is a provider whose logins are OAuth 2 authorisation-code
// grants with refresh tokens.
type OAuthProvider interface {
	Provider
	AuthCodeURL(AuthRequest) (string, error)
	Exchange(ctx context.Context, req ExchangeRequest) (Credential, error)
	// Refresh returns the new credential. When the provider does not rotate
	// the refresh token the result may leave RefreshToken empty; the engine
	// keeps the old one.
	Refresh(ctx context.Context, sub SubService, cred Credential) (Credential, error)
	// Revoke invalidates the grant at the provider, best effort.
	Revoke(ctx context.Context, cred Credential) error
	ClassifyError(err error) ErrorClass
}

// KeyField describes one input of a key connect form.
type KeyField struct {
	Name     string
	Label    string
	Secret   bool
	Optional bool
}

// ToolSpec is one curated tool a key provider offers after validation.
type ToolSpec struct {
	Name        string
	Description string
	InputSchema json.RawMessage
	DefaultOff  bool
}

// KeyValidation is the outcome of a successful key validation.
type KeyValidation struct {
	Credential  Credential // what the engine encrypts and stores
	AccountHint string     // shown next to the connection; never a secret
	Tools       []ToolSpec
}

// Injector is implemented by providers that decide how their credential is
// sent: "Authorization: Bearer", an X-API-KEY header, a raw Authorization
// value, environment variables... Without it the engine sends the header
// named by the catalog row's config ("header", optional "scheme"), else
// "Authorization: <TokenType> <AccessToken>", plus the _meta token.
type Injector interface {
	Inject(Credential) Injection
}

// KeyProvider is a provider whose logins are API keys the operator pastes.
type KeyProvider interface {
	Provider
	Injector
	Fields() []KeyField
	// Validate checks the key against the remote service. Its error message
	// is shown to the operator and must not contain the key.
	Validate(ctx context.Context, fields map[string]string) (KeyValidation, error)
}

// ConfigProvider is a provider of no-auth-with-config connections: the stored
// values (Credential.Extra, keyed by field name) are injected as headers or
// environment. ConnectKey checks them against Fields; a field with Secret
// false is kept out of redaction sets. There is no token and no refresh.
type ConfigProvider interface {
	Provider
	Injector
	Fields() []KeyField
}

// Tester is implemented by providers that can check a credential cheaply
// (`guilds connections test`).
type Tester interface {
	Test(ctx context.Context, sub SubService, cred Credential) error
}

// DefaultInjection is what a provider without an Injector gets.
func DefaultInjection(c Credential) Injection {
	if c.AccessToken == "" {
		return Injection{}
	}
	typ := c.TokenType
	switch {
	case typ == "" || strings.EqualFold(typ, "bearer"):
		typ = "Bearer"
	case strings.EqualFold(typ, "dpop"):
		typ = "DPoP" // the proof itself is added per request (internal/dpop.Transport)
	}
	return Injection{
		Headers: map[string]string{"Authorization": typ + " " + c.AccessToken},
		Meta:    map[string]any{MetaTokenField: c.AccessToken},
	}
}
