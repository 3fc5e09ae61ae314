// Package oauthgeneric is the generic OAuth 2 provider: any server whose
// catalog row describes its endpoints. It registers itself as provider
// "oauth2"; other providers (google) build on New.
//
// Catalog row config (mcp_servers.config):
//
//	{
//	  "provider": "oauth2",
//	  "oauth": {
//	    "auth_url": "https://…/authorize",
//	    "token_url": "https://…/token",
//	    "revoke_url": "https://…/revoke",        // optional, RFC 7009
//	    "client_id": "…",
//	    "client_secret_env": "NOTION_CLIENT_SECRET", // optional; or "client_secret"
//	    "auth_style": "basic" | "post" | "none",  // default: auto-detect
//	    "scopes": ["…"],
//	    "auth_params": {"access_type": "offline"}
//	  },
//	  "resource": "https://…/mcp"                 // optional RFC 8707 resource
//	}
package oauthgeneric

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/dpop"
	"github.com/guilds/guilds/internal/mcpoauth"
)

// ID is the provider id of catalog rows using the generic provider.
const ID connectors.ProviderID = "oauth2"

func init() { connectors.Register(plugin{}) }

// AuthStyle says how the client authenticates at the token endpoint.
type AuthStyle string

const (
	AuthStyleAuto  AuthStyle = ""      // try header, then body (x/oauth2 auto-detection)
	AuthStyleBasic AuthStyle = "basic" // HTTP Basic
	AuthStylePost  AuthStyle = "post"  // client_id/client_secret in the form
	AuthStyleNone  AuthStyle = "none"  // public client (PKCE), client_id in the form
)

// Config is one OAuth client.
type Config struct {
	ID           connectors.ProviderID
	AuthURL      string
	TokenURL     string
	RevokeURL    string
	ClientID     string
	ClientSecret string
	AuthStyle    AuthStyle
	// Scopes per sub-service; the "" entry applies to every sub-service without its own.
	Scopes map[connectors.SubService][]string
	// AuthParams are extra authorization URL parameters (access_type=offline, prompt=consent).
	AuthParams map[string]string
	// Registrations are clients registered per authorization server and
	// redirect URI (RFC 7591), keyed as mcpoauth.RegistrationKey writes them
	// (a key of the older form, the redirect URI alone, belongs to the
	// entry's Issuer, else to the row's): a login uses the one of Issuer and
	// its redirect URI, else ClientID.
	Registrations map[string]Registration
	// Issuer is the authorization server's issuer, kept with each login.
	Issuer     string
	HTTPClient *http.Client
}

// Registration is a client registered at one authorization server for one
// redirect URI.
type Registration struct {
	ClientID     string    `json:"client_id"`
	ClientSecret string    `json:"client_secret,omitempty"`
	AuthStyle    AuthStyle `json:"auth_style,omitempty"`
	Issuer       string    `json:"issuer,omitempty"` // "": the row's Issuer
}

// Provider is a configured OAuth 2 client implementing connectors.OAuthProvider.
type Provider struct {
	cfg Config
	// regs are the registrations of cfg.Issuer, by redirect URI.
	regs map[string]Registration
}

var _ connectors.OAuthProvider = (*Provider)(nil)

// New returns a provider for one client.
func New(cfg Config) (*Provider, error) {
	if cfg.TokenURL == "" || cfg.AuthURL == "" || (cfg.ClientID == "" && len(cfg.Registrations) == 0) {
		return nil, errors.New("oauth2 provider needs auth_url, token_url and client_id")
	}
	for _, u := range []string{cfg.AuthURL, cfg.TokenURL, cfg.RevokeURL} {
		if u == "" {
			continue
		}
		if err := checkEndpoint(u); err != nil {
			return nil, err
		}
	}
	if cfg.ID == "" {
		cfg.ID = ID
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	p := &Provider{cfg: cfg, regs: map[string]Registration{}}
	for k, r := range cfg.Registrations {
		issuer, uri := mcpoauth.SplitRegistrationKey(k, mcpoauth.Registration{Issuer: r.Issuer}, cfg.Issuer)
		if issuer == cfg.Issuer {
			p.regs[uri] = r
		}
	}
	return p, nil
}

// checkEndpoint accepts https URLs, and http on loopback (development,
// tests); cloud metadata, link-local and the IPv6 forms that embed them are
// refused by the outbound policy's own decision. Private addresses pass here:
// the dial-time policy of the client that calls them decides.
func checkEndpoint(raw string) error {
	if _, err := (mcpoauth.Policy{AllowLoopback: true, AllowPrivate: true}).Check(raw); err != nil {
		return fmt.Errorf("oauth2 provider: %w", err)
	}
	return nil
}

func (p *Provider) ID() connectors.ProviderID { return p.cfg.ID }

// clientFor is the client a login through redirect uses: the registration
// of the row's authorization server for that redirect URI, else the row's
// client.
func (p *Provider) clientFor(redirect string) connectors.OAuthClient {
	c := connectors.OAuthClient{ClientID: p.cfg.ClientID, ClientSecret: p.cfg.ClientSecret, AuthStyle: string(p.cfg.AuthStyle),
		TokenURL: p.cfg.TokenURL, RevokeURL: p.cfg.RevokeURL, Issuer: p.cfg.Issuer, RedirectURI: redirect}
	if r, ok := p.regs[redirect]; ok {
		c.ClientID, c.ClientSecret, c.AuthStyle = r.ClientID, r.ClientSecret, string(r.AuthStyle)
	}
	return c
}

// clientOf is the client a stored login was granted to. While the row still
// holds that client (its own, or the registration of the login's redirect
// URI) the row's current values are used, so an operator's new client secret
// takes effect; a client the row no longer holds is the one sealed with the
// login. Logins stored before the client was kept with them use the row's.
// A login of another authorization server than the row's keeps the sealed
// client, whose endpoints are that server's: its tokens never go to the
// row's new endpoints.
func (p *Provider) clientOf(cred connectors.Credential) connectors.OAuthClient {
	c := cred.Client
	switch {
	case c == nil || c.ClientID == "" || c.TokenURL == "":
		return p.clientFor("")
	case p.otherIssuer(cred):
		return *c
	case p.regs[c.RedirectURI].ClientID == c.ClientID:
		return p.clientFor(c.RedirectURI)
	case c.ClientID == p.cfg.ClientID:
		return p.clientFor("")
	}
	return *c
}

func (p *Provider) oauthConfig(sub connectors.SubService, c connectors.OAuthClient, redirect string) *oauth2.Config {
	style := oauth2.AuthStyleAutoDetect
	switch AuthStyle(c.AuthStyle) {
	case AuthStyleBasic:
		style = oauth2.AuthStyleInHeader
	case AuthStylePost, AuthStyleNone:
		style = oauth2.AuthStyleInParams
	}
	scopes, ok := p.cfg.Scopes[sub]
	if !ok {
		scopes = p.cfg.Scopes[""]
	}
	secret := c.ClientSecret
	if AuthStyle(c.AuthStyle) == AuthStyleNone {
		secret = ""
	}
	return &oauth2.Config{
		ClientID:     c.ClientID,
		ClientSecret: secret,
		Endpoint:     oauth2.Endpoint{AuthURL: p.cfg.AuthURL, TokenURL: c.TokenURL, AuthStyle: style},
		RedirectURL:  redirect,
		Scopes:       scopes,
	}
}

func (p *Provider) ctx(ctx context.Context) context.Context {
	return context.WithValue(ctx, oauth2.HTTPClient, p.cfg.HTTPClient)
}

// tokenCtx is the context of a token request: with a login's DPoP key
// (connectors.Credential.DPoPKey), its client sends a fresh proof with the
// request and answers a use_dpop_nonce challenge with the server's nonce.
func (p *Provider) tokenCtx(ctx context.Context, key string) (context.Context, error) {
	if key == "" {
		return p.ctx(ctx), nil
	}
	k, err := dpop.ParsePrivate([]byte(key))
	if err != nil {
		return nil, err
	}
	c := *p.cfg.HTTPClient
	c.Transport = dpop.NewTransport(c.Transport, k)
	return context.WithValue(ctx, oauth2.HTTPClient, &c), nil
}

// AuthCodeURL builds the authorization URL with state, the S256 PKCE
// challenge and, when set, the resource indicator.
func (p *Provider) AuthCodeURL(req connectors.AuthRequest) (string, error) {
	opts := []oauth2.AuthCodeOption{oauth2.S256ChallengeOption(req.Verifier)}
	if req.Resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", req.Resource))
	}
	for k, v := range p.cfg.AuthParams {
		opts = append(opts, oauth2.SetAuthURLParam(k, v))
	}
	c := p.clientFor(req.RedirectURL)
	if c.ClientID == "" {
		return "", fmt.Errorf("oauth2 provider: no client is registered for redirect URI %q", req.RedirectURL)
	}
	return p.oauthConfig(req.SubService, c, req.RedirectURL).AuthCodeURL(req.State, opts...), nil
}

// Exchange trades the code (with the PKCE verifier) for tokens.
func (p *Provider) Exchange(ctx context.Context, req connectors.ExchangeRequest) (connectors.Credential, error) {
	opts := []oauth2.AuthCodeOption{oauth2.VerifierOption(req.Verifier)}
	if req.Resource != "" {
		opts = append(opts, oauth2.SetAuthURLParam("resource", req.Resource))
	}
	client := p.clientFor(req.RedirectURL)
	tctx, err := p.tokenCtx(ctx, req.DPoPKey)
	if err != nil {
		return connectors.Credential{}, err
	}
	tok, err := p.oauthConfig(req.SubService, client, req.RedirectURL).Exchange(tctx, req.Code, opts...)
	if err != nil {
		return connectors.Credential{}, err
	}
	c := fromToken(tok)
	c.DPoPKey = req.DPoPKey
	// The login keeps the client it was granted to, sealed with its tokens.
	c.Client = &client
	// Notion's token response names the workspace's email domain: a display
	// value for the connection, which the engine keeps out of the credential.
	if d, ok := tok.Extra("email_domain").(string); ok && d != "" && len(d) <= 253 {
		c.Extra = map[string]string{connectors.ExtraAccountHint: d}
	}
	return c, nil
}

// otherIssuer reports whether the login was issued by another
// authorization server than the one the row names (both recorded).
func (p *Provider) otherIssuer(cred connectors.Credential) bool {
	return cred.Client != nil && cred.Client.Issuer != "" && p.cfg.Issuer != "" && cred.Client.Issuer != p.cfg.Issuer
}

// Refresh uses the refresh token once. A login of another authorization
// server than the row's is not refreshed (connectors.ErrIssuerChanged): the
// resource no longer takes that server's tokens, and the new server must
// never see the former one's refresh token.
func (p *Provider) Refresh(ctx context.Context, sub connectors.SubService, cred connectors.Credential) (connectors.Credential, error) {
	if p.otherIssuer(cred) {
		return connectors.Credential{}, connectors.ErrIssuerChanged
	}
	client := p.clientOf(cred)
	tctx, err := p.tokenCtx(ctx, cred.DPoPKey)
	if err != nil {
		return connectors.Credential{}, err
	}
	src := p.oauthConfig(sub, client, "").TokenSource(tctx, &oauth2.Token{RefreshToken: cred.RefreshToken})
	tok, err := src.Token()
	if err != nil {
		return connectors.Credential{}, err
	}
	c := fromToken(tok)
	c.Client, c.DPoPKey = cred.Client, cred.DPoPKey
	return c, nil
}

// Revoke revokes the refresh token (or the access token) at the RFC 7009
// endpoint when the row has one.
func (p *Provider) Revoke(ctx context.Context, cred connectors.Credential) error {
	client := p.clientOf(cred)
	if client.RevokeURL == "" {
		return nil
	}
	style := AuthStyle(client.AuthStyle)
	tok, hint := cred.RefreshToken, "refresh_token"
	if tok == "" {
		tok, hint = cred.AccessToken, "access_token"
	}
	form := url.Values{"token": {tok}, "token_type_hint": {hint}}
	// The client authenticates as it does at the token endpoint (RFC 7009
	// 2.1); with auto-detection a confidential client uses HTTP Basic, the
	// method every server must support.
	basic := style == AuthStyleBasic || style == AuthStyleAuto && client.ClientSecret != ""
	if !basic {
		form.Set("client_id", client.ClientID)
		if style == AuthStylePost && client.ClientSecret != "" {
			form.Set("client_secret", client.ClientSecret)
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, client.RevokeURL, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if basic {
		req.SetBasicAuth(url.QueryEscape(client.ClientID), url.QueryEscape(client.ClientSecret))
	}
	resp, err := p.cfg.HTTPClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("revoke: HTTP %d", resp.StatusCode)
	}
	return nil
}

// ClassifyError uses the engine's common OAuth classification.
func (p *Provider) ClassifyError(err error) connectors.ErrorClass {
	return connectors.ClassifyOAuthError(err)
}

func fromToken(t *oauth2.Token) connectors.Credential {
	c := connectors.Credential{AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, TokenType: t.TokenType, Expiry: t.Expiry}
	if c.Expiry.IsZero() && t.ExpiresIn > 0 {
		c.Expiry = time.Now().Add(time.Duration(t.ExpiresIn) * time.Second)
	}
	return c
}

// plugin is the registered, unconfigured form; Configure builds a Provider
// per catalog row.
type plugin struct{}

func (plugin) ID() connectors.ProviderID { return ID }

func (plugin) Configure(pc connectors.ProviderConfig) (connectors.Provider, error) {
	rc, err := catalog.ParseConfig(pc.Config)
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", pc.Server, err)
	}
	o := rc.OAuth
	secret := o.ClientSecret
	if o.ClientSecretEnv != "" && pc.Getenv != nil {
		secret = pc.Getenv(o.ClientSecretEnv)
	}
	switch AuthStyle(o.AuthStyle) {
	case AuthStyleAuto, AuthStyleBasic, AuthStylePost, AuthStyleNone:
	default:
		return nil, fmt.Errorf("server %s: auth_style must be basic, post or none", pc.Server)
	}
	// The issuer of each registration is read from the row as mcpoauth
	// writes it (catalog.Registration does not carry it).
	var withIssuers struct {
		OAuth struct {
			Registrations map[string]struct {
				Issuer string `json:"issuer"`
			} `json:"registrations"`
		} `json:"oauth"`
	}
	_ = json.Unmarshal(pc.Config, &withIssuers) // ParseConfig above read it
	var regs map[string]Registration
	if len(o.Registrations) > 0 {
		regs = make(map[string]Registration, len(o.Registrations))
	}
	for key, r := range o.Registrations {
		switch AuthStyle(r.AuthStyle) {
		case AuthStyleAuto, AuthStyleBasic, AuthStylePost, AuthStyleNone:
		default:
			return nil, fmt.Errorf("server %s: the registration for %s has an unknown auth_style", pc.Server, key)
		}
		regs[key] = Registration{ClientID: r.ClientID, ClientSecret: r.ClientSecret, AuthStyle: AuthStyle(r.AuthStyle),
			Issuer: withIssuers.OAuth.Registrations[key].Issuer}
	}
	p, err := New(Config{AuthURL: o.AuthURL, TokenURL: o.TokenURL, RevokeURL: o.RevokeURL, ClientID: o.ClientID,
		ClientSecret: secret, AuthStyle: AuthStyle(o.AuthStyle), Scopes: map[connectors.SubService][]string{"": o.Scopes},
		AuthParams: o.AuthParams, Registrations: regs, Issuer: o.Issuer, HTTPClient: pc.HTTPClient})
	if err != nil {
		return nil, fmt.Errorf("server %s: %w", pc.Server, err)
	}
	return p, nil
}
