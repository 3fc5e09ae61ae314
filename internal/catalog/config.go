package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Config is what a catalog row's config JSON holds, for reading. Writers that
// rewrite a stored config (secret sealing and redaction, OAuth preparation)
// work on the raw object so that keys this struct does not name survive
// byte for byte; Config is never marshalled back into a row.
type Config struct {
	// Provider names the connectors plugin ("oauth2", "google", "github",
	// "configured"); empty means the slug.
	Provider string `json:"provider"`
	// SubService picks a service of a shared provider (google: gmail, drive).
	SubService string `json:"sub_service"`
	// DynamicRegistration: the OAuth client is registered at first connect.
	DynamicRegistration bool `json:"dynamic_registration"`
	// Adapter names the local adapter of a KindAdapter row; empty means the slug.
	Adapter string `json:"adapter"`
	// Header and Scheme say how a key is sent ({"header": "Authorization",
	// "scheme": "Bearer"}).
	Header string `json:"header"`
	Scheme string `json:"scheme"`
	// Command and Args start a stdio server.
	Command string   `json:"command"`
	Args    []string `json:"args"`
	// Resource is the RFC 8707 resource the OAuth preparation recorded.
	Resource string `json:"resource"`
	// Fields are the values a configured server asks for, each parsed and
	// checked by the configured provider.
	Fields []json.RawMessage `json:"fields"`
	// KeyFields are what a token row's key connect takes instead of one key
	// (Wallet's keys, Qonto's login and secret key), sent in Connect's
	// values; each is stored sealed and joins the login's redaction set.
	KeyFields []KeyField `json:"key_fields"`
	OAuth     OAuth      `json:"oauth"`
	// Elicitation is how the platform answers the server's forms
	// (elicitation/create, input requests): ElicitDecline, the default,
	// ElicitDefaults, or ElicitPerson.
	Elicitation string `json:"elicitation"`
	// InputWaitSeconds bounds how long a call waits for a person to answer
	// one of the server's forms (ElicitPerson); 0 keeps DefaultInputWait.
	InputWaitSeconds int `json:"input_wait_seconds"`
	// ListTimeoutSeconds and CallTimeoutSeconds raise (or lower) the
	// session pool's bounds for this server's tools/list, initialize
	// included, and tools/call; 0 keeps the defaults (15 s and 90 s).
	ListTimeoutSeconds int `json:"list_timeout_seconds"`
	CallTimeoutSeconds int `json:"call_timeout_seconds"`
}

// Bounds of a row's own timeouts: a listing runs while an operator waits;
// a call runs inside its activity, whose timeout follows MaxCallTimeout.
const (
	MaxListTimeoutSeconds = 120
	MaxCallTimeoutSeconds = 300
	// A form sent to a person holds its call's activity (docs/adr/0515):
	// the wait is bounded so that a worker slot is not held for long.
	MaxInputWaitSeconds     = 1800
	DefaultInputWaitSeconds = 600
)

// CheckTimeouts names what is wrong with a row's own timeouts ("" when
// nothing is).
func (c Config) CheckTimeouts() (field, problem string) {
	switch {
	case c.ListTimeoutSeconds < 0 || c.ListTimeoutSeconds > MaxListTimeoutSeconds:
		return "config.list_timeout_seconds", fmt.Sprintf("must be from 1 to %d seconds (0 or absent: the default)", MaxListTimeoutSeconds)
	case c.CallTimeoutSeconds < 0 || c.CallTimeoutSeconds > MaxCallTimeoutSeconds:
		return "config.call_timeout_seconds", fmt.Sprintf("must be from 1 to %d seconds (0 or absent: the default)", MaxCallTimeoutSeconds)
	case c.InputWaitSeconds < 0 || c.InputWaitSeconds > MaxInputWaitSeconds:
		return "config.input_wait_seconds", fmt.Sprintf("must be from 1 to %d seconds (0 or absent: %d)", MaxInputWaitSeconds, DefaultInputWaitSeconds)
	}
	return "", ""
}

// How a server's forms are answered. By default the platform declines (a run
// may have nobody watching); an operator may let a server's forms be answered
// with their own defaults (forms of preferences that all have a default,
// never a confirmation), which is what a person pressing OK unchanged would
// send, or sent to a person: the operator's inbox shows the form and the
// call waits for the answer up to InputWait (docs/adr/0515).
const (
	ElicitDecline  = "decline"
	ElicitDefaults = "defaults"
	ElicitPerson   = "person"
)

// ValidElicitation reports whether v is a value config.elicitation may take.
func ValidElicitation(v string) bool {
	return v == "" || v == ElicitDecline || v == ElicitDefaults || v == ElicitPerson
}

// InputWait is how long a call waits for a person to answer a form.
func (c Config) InputWait() time.Duration {
	if c.InputWaitSeconds <= 0 {
		return DefaultInputWaitSeconds * time.Second
	}
	return time.Duration(c.InputWaitSeconds) * time.Second
}

// KeyField is one field of a multi-field key connect.
type KeyField struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	Optional bool   `json:"optional"`
}

// OAuth is config.oauth: the row's OAuth client and endpoints.
type OAuth struct {
	AuthURL     string `json:"auth_url"`
	TokenURL    string `json:"token_url"`
	RevokeURL   string `json:"revoke_url"`
	UserinfoURL string `json:"userinfo_url"`
	Issuer      string `json:"issuer"`
	// IssParameterSupported is the issuer's RFC 9207 promise to send iss
	// in every authorization response (written by mcpoauth.Prepare).
	IssParameterSupported bool              `json:"authorization_response_iss_parameter_supported,omitempty"`
	ClientID              string            `json:"client_id"`
	ClientSecret          string            `json:"client_secret"`
	ClientSecretEnv       string            `json:"client_secret_env"`
	AuthStyle             string            `json:"auth_style"`
	Scopes                []string          `json:"scopes"`
	AuthParams            map[string]string `json:"auth_params"`
	RedirectURI           string            `json:"redirect_uri"`
	// Registered marks a client the platform registered (RFC 7591).
	Registered bool `json:"registered"`
	// Registrations are the clients Connect registered, by redirect URI.
	Registrations map[string]Registration `json:"registrations"`
}

// Registration is a client registered for one redirect URI.
type Registration struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	AuthStyle    string `json:"auth_style"`
}

// ParseConfig reads a catalog row's config. An empty or null config is the
// zero Config; anything else must be a JSON object whose known keys have
// their documented types. On a type error the keys that did decode are kept
// (as encoding/json does), so a lenient reader may use the result and drop
// the error; a validator reports it.
func ParseConfig(raw []byte) (Config, error) {
	var c Config
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return c, nil
	}
	if t[0] != '{' {
		return Config{}, errors.New("catalog config is not a JSON object")
	}
	if err := json.Unmarshal(t, &c); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return c, fmt.Errorf("catalog config: %w", err)
		}
		return Config{}, fmt.Errorf("catalog config: %w", err)
	}
	return c, nil
}

// AdapterName is the local adapter a row is served by: config.adapter, else
// the slug.
func (c Config) AdapterName(slug string) string {
	if c.Adapter != "" {
		return c.Adapter
	}
	return slug
}

// ProviderName is the connectors plugin a row names: config.provider, else
// the slug.
func (c Config) ProviderName(slug string) string {
	if c.Provider != "" {
		return c.Provider
	}
	return slug
}

// NeedsNoLogin reports whether a row is a remote MCP server that takes
// neither a login nor configured values (auth none, no provider, no fields):
// turning it on at a scope is all it needs (docs/adr/0616-servers-that-need-no-login.md).
func NeedsNoLogin(kind Kind, auth Auth, c Config) bool {
	return kind == KindRemote && auth == AuthNone && c.Provider == "" && len(c.Fields) == 0
}
