// Package githubapp is the box's GitHub App: its credentials, the App JWT it
// signs (RS256, nine minutes), and the REST calls the connect flow and the
// coding runs make to GitHub (user authorization, installations, installation
// access tokens, repositories). The private key and the installation ids never
// leave the orchestrator. See docs/adr/1201-github-app.md.
package githubapp

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/guilds/guilds/internal/integrations"
)

// Integration is the registry entry the App's variables belong to.
const Integration = "github-app"

// The App's variables (integrations.Catalog lists them too).
const (
	VarAppID        = "GITHUB_APP_ID"
	VarSlug         = "GITHUB_APP_SLUG"
	VarPrivateKey   = "GITHUB_APP_PRIVATE_KEY"
	VarClientID     = "GITHUB_APP_CLIENT_ID"
	VarClientSecret = "GITHUB_APP_CLIENT_SECRET" //nolint:gosec // G101: the variable's name, not a value
)

// Base URL overrides (the integration's tuning variables), for tests against
// a local GitHub (githubtest): the REST API and the web host (installations,
// user authorization, git over https).
const (
	EnvAPIURL = "GUILDS_GITHUB_API_URL" // default https://api.github.com
	EnvWebURL = "GUILDS_GITHUB_URL"     // default https://github.com
)

// Config is the App as the box holds it.
type Config struct {
	AppID        int64
	Slug         string
	Key          *rsa.PrivateKey
	ClientID     string
	ClientSecret string
	APIURL       string // no trailing slash
	WebURL       string // no trailing slash
}

// NotSetUpError: the box lacks some of the App's variables. Missing names
// them (never a value).
type NotSetUpError struct{ Missing []string }

func (e *NotSetUpError) Error() string {
	return "the GitHub App is not set up on this box; set " + strings.Join(e.Missing, ", ")
}

// FromRegistry reads the App and its base URLs from the integrations
// registry (the only reader of the environment for it). A missing variable is a *NotSetUpError; a present but unusable one
// (an id that is not a number, a key that is not an RSA PEM) names the
// variable.
func FromRegistry(reg *integrations.Registry) (Config, error) {
	st, ok := reg.Get(Integration)
	if !ok || st.State != integrations.On {
		missing := st.Missing
		if !ok || len(missing) == 0 {
			missing = []string{VarAppID, VarSlug, VarPrivateKey, VarClientID, VarClientSecret}
		}
		return Config{}, &NotSetUpError{Missing: missing}
	}
	val := func(name string) string { return reg.Value(Integration, name) }
	id, err := strconv.ParseInt(val(VarAppID), 10, 64)
	if err != nil || id <= 0 {
		return Config{}, fmt.Errorf("%s must be the App's numeric id", VarAppID)
	}
	key, err := ParsePrivateKey(val(VarPrivateKey))
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", VarPrivateKey, err)
	}
	return Config{AppID: id, Slug: val(VarSlug), Key: key, ClientID: val(VarClientID), ClientSecret: val(VarClientSecret),
		APIURL: baseURL(val(EnvAPIURL), "https://api.github.com"), WebURL: baseURL(val(EnvWebURL), "https://github.com")}, nil
}

func baseURL(v, def string) string {
	v = strings.TrimRight(strings.TrimSpace(v), "/")
	if v == "" {
		return def
	}
	return v
}

// ParsePrivateKey reads the App's PEM private key, written with real
// newlines or with \n escapes (as one .env line holds it), PKCS#1 (what
// GitHub hands out) or PKCS#8.
func ParsePrivateKey(s string) (*rsa.PrivateKey, error) {
	s = strings.ReplaceAll(strings.TrimSpace(s), `\n`, "\n")
	block, _ := pem.Decode([]byte(s))
	if block == nil {
		return nil, errors.New("is not a PEM private key")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("is not an RSA private key (PKCS#1 or PKCS#8)")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("is not an RSA private key")
	}
	return rk, nil
}
