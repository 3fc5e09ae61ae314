// Package google is the Google provider: one OAuth client (the Google Cloud
// web application of GMAIL_OAUTH_CLIENT_ID / GMAIL_OAUTH_CLIENT_SECRET) shared
// by the sub-services gmail and drive, each with its own scopes. Offline
// access is requested so that Google returns a refresh token.
//
// A catalog row uses it with config {"provider": "google", "sub_service":
// "gmail"}. Tests and proxies may override the endpoints with
// {"oauth": {"auth_url": …, "token_url": …, "revoke_url": …}}.
package google

import (
	"errors"
	"fmt"
	"sync"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connectors/providers/oauthgeneric"
)

// ID of the provider.
const ID connectors.ProviderID = "google"

// Sub-services.
const (
	Gmail connectors.SubService = "gmail"
	Drive connectors.SubService = "drive"
)

// Integration is the box's integration that configures the shared client.
const Integration = "google-connectors"

// Environment variables of the shared client, read through the integrations
// registry (ProviderConfig.Integrations), never from the environment itself.
const (
	EnvClientID     = "GMAIL_OAUTH_CLIENT_ID"
	EnvClientSecret = "GMAIL_OAUTH_CLIENT_SECRET" //nolint:gosec // G101: the name of a variable, not its value
)

// Google's user OAuth endpoints.
const (
	AuthURL   = "https://accounts.google.com/o/oauth2/v2/auth"
	TokenURL  = "https://oauth2.googleapis.com/token" //nolint:gosec // G101: a public endpoint URL
	RevokeURL = "https://oauth2.googleapis.com/revoke"
)

// Scopes per sub-service.
var Scopes = map[connectors.SubService][]string{
	Gmail: {"https://www.googleapis.com/auth/gmail.readonly", "https://www.googleapis.com/auth/gmail.compose"},
	Drive: {"https://www.googleapis.com/auth/drive"},
}

func init() { connectors.Register(&plugin{clients: map[string]*oauthgeneric.Provider{}}) }

type plugin struct {
	mu      sync.Mutex
	clients map[string]*oauthgeneric.Provider // one per client id and endpoints
}

func (*plugin) ID() connectors.ProviderID { return ID }

func (*plugin) SubServices() []connectors.SubService { return []connectors.SubService{Gmail, Drive} }

func (*plugin) EnvVars() []string { return []string{EnvClientID} }

// Configure returns the shared client; gmail and drive rows get the same instance.
func (p *plugin) Configure(pc connectors.ProviderConfig) (connectors.Provider, error) {
	if _, ok := Scopes[pc.SubService]; !ok {
		return nil, fmt.Errorf("server %s: google sub_service must be gmail or drive, got %q", pc.Server, pc.SubService)
	}
	rc, _ := catalog.ParseConfig(pc.Config) // lenient: the endpoints default to Google's
	cfg := oauthgeneric.Config{
		ID: ID, AuthURL: AuthURL, TokenURL: TokenURL, RevokeURL: RevokeURL,
		AuthStyle: oauthgeneric.AuthStylePost, Scopes: Scopes,
		AuthParams: map[string]string{"access_type": "offline", "prompt": "consent", "include_granted_scopes": "true"},
		HTTPClient: pc.HTTPClient,
	}
	if pc.Integrations != nil {
		cfg.ClientID, cfg.ClientSecret = pc.Integrations.Value(Integration, EnvClientID), pc.Integrations.Value(Integration, EnvClientSecret)
	}
	if cfg.ClientID == "" || cfg.ClientSecret == "" {
		return nil, errors.New("google connectors need " + EnvClientID + " and " + EnvClientSecret)
	}
	if rc.OAuth.AuthURL != "" {
		cfg.AuthURL = rc.OAuth.AuthURL
	}
	if rc.OAuth.TokenURL != "" {
		cfg.TokenURL = rc.OAuth.TokenURL
	}
	if rc.OAuth.RevokeURL != "" {
		cfg.RevokeURL = rc.OAuth.RevokeURL
	}
	key := cfg.ClientID + "\x00" + cfg.AuthURL + "\x00" + cfg.TokenURL + "\x00" + cfg.RevokeURL
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.clients[key]; c != nil {
		return c, nil
	}
	c, err := oauthgeneric.New(cfg)
	if err != nil {
		return nil, err
	}
	p.clients[key] = c
	return c, nil
}
