// Package models talks to OpenAI-compatible chat-completions providers
// (OpenRouter, DeepInfra) with tool calling, and decides which key a call
// uses: the organisation's own key for a provider wins over the box's key.
package models

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
)

// Providers.
const (
	OpenRouter = "openrouter"
	DeepInfra  = "deepinfra"
)

// provider describes one chat-completions endpoint.
type provider struct {
	name         string
	baseURL      string
	integration  string // the box integration holding its key
	variable     string
	defaultModel string // used when an agent names no model
}

// providers in the order used to pick a default.
var providers = []provider{
	{OpenRouter, "https://openrouter.ai/api/v1", "openrouter", "OPENROUTER_API_KEY", "openai/gpt-4o-mini"},
	{DeepInfra, "https://api.deepinfra.com/v1/openai", "deepinfra", "DEEPINFRA_API_KEY", "meta-llama/Meta-Llama-3.1-70B-Instruct"},
}

func lookup(name string) (provider, bool) {
	for _, p := range providers {
		if p.name == name {
			return p, true
		}
	}
	return provider{}, false
}

// Names lists the known providers.
func Names() []string {
	out := make([]string, len(providers))
	for i, p := range providers {
		out[i] = p.name
	}
	return out
}

// Known reports whether name is a provider.
func Known(name string) bool { _, ok := lookup(name); return ok }

// ErrNoKey: neither the organisation nor the box holds a key for the provider
// a run needs (or for any provider).
var ErrNoKey = errors.New("no model key")

// NoKeyError says which provider lacks a key; errors.Is(err, ErrNoKey).
type NoKeyError struct{ Provider string }

func (e *NoKeyError) Error() string {
	if e.Provider == "" {
		return "no model provider has a key yet: set one for the organisation (PUT /api/orgs/{id}/model-keys/{provider}) or on the box (OPENROUTER_API_KEY, DEEPINFRA_API_KEY)"
	}
	return fmt.Sprintf("provider %s has no key yet: set one for the organisation or on the box", e.Provider)
}

func (e *NoKeyError) Is(target error) bool { return target == ErrNoKey }

// Target is a resolved model call: where to send it and with which key.
// Key is a credential: never log it, never put it in a workflow payload.
type Target struct {
	Provider  string
	Model     string
	BaseURL   string
	Key       string
	KeySource string // "organisation" | "box"
}

// LogValue keeps the key out of logs.
func (t Target) LogValue() slog.Value {
	return slog.GroupValue(slog.String("provider", t.Provider), slog.String("model", t.Model),
		slog.String("key_source", t.KeySource))
}

// Resolver finds the key and endpoint of a model call.
type Resolver struct {
	Integrations *integrations.Registry
	Keyring      *secret.Keyring   // nil: organisation keys can be neither stored nor used
	BaseURLs     map[string]string // provider → base URL override (tests, proxies)
	Timeout      time.Duration     // per model request; 0 means 120 s
	HTTP         *http.Client      // nil means a client with Timeout
}

// Split parses an agent's model: "provider/model" when the first segment
// names a known provider, a provider's name alone (or "provider/") for that
// provider's default model, else a bare model ("" provider).
func Split(model string) (providerName, name string) {
	model = strings.TrimSpace(model)
	if Known(model) {
		return model, ""
	}
	if i := strings.IndexByte(model, '/'); i > 0 && Known(model[:i]) {
		return model[:i], model[i+1:]
	}
	return "", model
}

// ProviderStatus tells whether a provider can be used by an organisation.
type ProviderStatus struct {
	Provider string `json:"provider"`
	OrgKey   bool   `json:"organisation_key"`
	BoxKey   bool   `json:"box_key"`
	HasKey   bool   `json:"has_key"`
	Label    string `json:"label,omitempty"` // "no key yet" when neither holds one
}

// Providers reports, for each provider, who holds a key.
func (r *Resolver) Providers(ctx context.Context, db store.DB, orgID string) ([]ProviderStatus, error) {
	orgKeys, err := OrgKeyProviders(ctx, db, orgID)
	if err != nil {
		return nil, err
	}
	out := make([]ProviderStatus, 0, len(providers))
	for _, p := range providers {
		s := ProviderStatus{Provider: p.name, OrgKey: orgKeys[p.name] && r.Keyring != nil, BoxKey: r.boxKey(p) != ""}
		s.HasKey = s.OrgKey || s.BoxKey
		if !s.HasKey {
			s.Label = "no key yet"
		}
		out = append(out, s)
	}
	return out, nil
}

func (r *Resolver) boxKey(p provider) string {
	if r.Integrations == nil {
		return ""
	}
	return r.Integrations.Value(p.integration, p.variable)
}

// Resolve picks the provider, model, endpoint and key of an agent's model.
// A bare model goes to the first provider with a key.
func (r *Resolver) Resolve(ctx context.Context, db store.DB, orgID, agentModel string) (Target, error) {
	pname, model := Split(agentModel)
	candidates := providers
	if pname != "" {
		p, _ := lookup(pname)
		candidates = []provider{p}
	}
	for _, p := range candidates {
		key, source, err := r.key(ctx, db, orgID, p)
		if err != nil {
			return Target{}, err
		}
		if key == "" {
			continue
		}
		t := Target{Provider: p.name, Model: model, BaseURL: p.baseURL, Key: key, KeySource: source}
		if u := r.BaseURLs[p.name]; u != "" {
			t.BaseURL = strings.TrimRight(u, "/")
		}
		if t.Model == "" {
			t.Model = p.defaultModel
		}
		return t, nil
	}
	return Target{}, &NoKeyError{Provider: pname}
}

func (r *Resolver) key(ctx context.Context, db store.DB, orgID string, p provider) (string, string, error) {
	if r.Keyring != nil {
		k, err := OrgKey(ctx, db, r.Keyring, orgID, p.name)
		switch {
		case err == nil:
			return k, "organisation", nil
		case !errors.Is(err, store.ErrNotFound):
			return "", "", err
		}
	}
	if k := r.boxKey(p); k != "" {
		return k, "box", nil
	}
	return "", "", nil
}

// Qualified is the "provider/model" form stored on a run.
func (t Target) Qualified() string { return t.Provider + "/" + t.Model }

// FromEnv builds the resolver main uses: box keys from the integrations
// registry, organisation keys sealed with kr (nil: box keys only), and base
// URL overrides from GUILDS_OPENROUTER_BASE_URL and GUILDS_DEEPINFRA_BASE_URL.
func FromEnv(integ *integrations.Registry, kr *secret.Keyring, getenv func(string) string) *Resolver {
	r := &Resolver{Integrations: integ, Keyring: kr, BaseURLs: map[string]string{}}
	for _, p := range providers {
		if u := getenv("GUILDS_" + strings.ToUpper(p.name) + "_BASE_URL"); u != "" {
			r.BaseURLs[p.name] = u
		}
	}
	return r
}
