// Package integrations is the one registry of what the box as a whole can do once
// the operator sets the matching environment variables. Other modules ask this
// registry whether an integration is on; they never read these variables themselves.
package integrations

import (
	"os"
	"sort"
	"strings"
)

// State of an integration.
type State string

const (
	On         State = "on"         // every required variable is set
	Off        State = "off"        // no required variable is set
	Incomplete State = "incomplete" // some, not all, required variables are set
)

// Switches lists what an integration turns on.
type Switches struct {
	ModelProviders []string `json:"model_providers"`
	NativeTools    []string `json:"native_tools"`
	Connectors     []string `json:"connectors"`
	Features       []string `json:"features"`
}

func (s Switches) normalised() Switches {
	orEmpty := func(l []string) []string {
		if l == nil {
			return []string{}
		}
		return l
	}
	return Switches{orEmpty(s.ModelProviders), orEmpty(s.NativeTools), orEmpty(s.Connectors), orEmpty(s.Features)}
}

// Integration is one entry of the registry.
type Integration struct {
	Name     string
	Summary  string
	Required []string // all must be set for the integration to be on
	Tuning   []string // optional variables that adjust it
	Switches Switches
}

// Catalog is the fixed list of integrations, in display order.
var Catalog = []Integration{
	{Name: "openrouter", Summary: "OpenRouter models for organisations without their own OpenRouter key",
		Required: []string{"OPENROUTER_API_KEY"}, Switches: Switches{ModelProviders: []string{"openrouter"}}},
	{Name: "deepinfra", Summary: "DeepInfra models for organisations without their own DeepInfra key",
		Required: []string{"DEEPINFRA_API_KEY"}, Switches: Switches{ModelProviders: []string{"deepinfra"}}},
	{Name: "web-search", Summary: "Web search for agents through Tavily",
		Required: []string{"TAVILY_API_KEY"}, Switches: Switches{NativeTools: []string{"tavily_search"}}},
	{Name: "group-routing", Summary: "Choice of recipients and history in group chat",
		Required: []string{"TYPESAFE_API_KEY"}, Tuning: []string{"TYPESAFE_MODEL"},
		Switches: Switches{Features: []string{"group_routing"}}},
	{Name: "github-app", Summary: "The GitHub connector and guild repositories, through the box's GitHub App",
		Required: []string{"GITHUB_APP_ID", "GITHUB_APP_SLUG", "GITHUB_APP_PRIVATE_KEY", "GITHUB_APP_CLIENT_ID", "GITHUB_APP_CLIENT_SECRET"},
		// The REST API's and the web host's base URLs, for a local GitHub in tests.
		Tuning:   []string{"GUILDS_GITHUB_API_URL", "GUILDS_GITHUB_URL"},
		Switches: Switches{Connectors: []string{"github"}, Features: []string{"guild_repositories"}}},
	{Name: "google-connectors", Summary: "The Gmail and Drive connectors, through the box's Google OAuth client",
		Required: []string{"GMAIL_OAUTH_CLIENT_ID", "GMAIL_OAUTH_CLIENT_SECRET"},
		Switches: Switches{Connectors: []string{"gmail", "drive"}}},
	{Name: "error-reporting", Summary: "Error reports to Sentry",
		Required: []string{"SENTRY_DSN"}, Switches: Switches{Features: []string{"error_reporting"}}},
}

// VarStatus says whether one variable is set; it never carries the value.
type VarStatus struct {
	Name     string `json:"name"`
	Set      bool   `json:"set"`
	Required bool   `json:"required"`
}

// Status is an integration as the environment makes it.
type Status struct {
	Name      string      `json:"name"`
	Summary   string      `json:"summary"`
	State     State       `json:"state"`
	Variables []VarStatus `json:"variables"`
	Missing   []string    `json:"missing"`
	Switches  Switches    `json:"switches_on"`
}

// Registry answers questions about integrations from one snapshot of the environment.
type Registry struct {
	byName map[string]Status
	values map[string]string
}

// New reads the environment through getenv (os.Getenv when nil).
func New(getenv func(string) string) *Registry {
	if getenv == nil {
		getenv = os.Getenv
	}
	r := &Registry{byName: map[string]Status{}, values: map[string]string{}}
	for _, in := range Catalog {
		st := Status{Name: in.Name, Summary: in.Summary, Switches: in.Switches.normalised(), Missing: []string{}}
		set := 0
		for _, v := range in.Required {
			val := strings.TrimSpace(getenv(v))
			if val != "" {
				set++
				r.values[v] = val
			} else {
				st.Missing = append(st.Missing, v)
			}
			st.Variables = append(st.Variables, VarStatus{Name: v, Set: val != "", Required: true})
		}
		for _, v := range in.Tuning {
			val := strings.TrimSpace(getenv(v))
			if val != "" {
				r.values[v] = val
			}
			st.Variables = append(st.Variables, VarStatus{Name: v, Set: val != ""})
		}
		switch {
		case set == len(in.Required):
			st.State = On
		case set == 0:
			st.State = Off
		default:
			st.State = Incomplete
		}
		r.byName[in.Name] = st
	}
	return r
}

// All returns every integration's status in catalog order.
func (r *Registry) All() []Status {
	out := make([]Status, 0, len(Catalog))
	for _, in := range Catalog {
		out = append(out, r.byName[in.Name])
	}
	return out
}

// Get returns one integration's status.
func (r *Registry) Get(name string) (Status, bool) {
	st, ok := r.byName[name]
	return st, ok
}

// On reports whether the named integration is fully configured.
func (r *Registry) On(name string) bool { return r.byName[name].State == On }

// Value returns a variable (required or tuning) of an integration that is on, for
// the module it serves. It is empty otherwise, so a half-configured box never uses it.
func (r *Registry) Value(integration, variable string) string {
	if !r.On(integration) {
		return ""
	}
	return r.values[variable]
}

// VariableSet reports whether a variable of the catalog is set, whether its
// integration is complete or not; it never says the value.
func (r *Registry) VariableSet(name string) bool {
	for _, st := range r.byName {
		for _, v := range st.Variables {
			if v.Name == name && v.Set {
				return true
			}
		}
	}
	return false
}

// ConnectorEnabled reports whether a connector slug depends on an integration,
// and if so whether that integration is on and which variables it lacks.
func (r *Registry) ConnectorEnabled(slug string) (dependsOn string, on bool, missing []string) {
	for _, in := range Catalog {
		for _, s := range in.Switches.Connectors {
			if s == slug {
				st := r.byName[in.Name]
				return in.Name, st.State == On, st.Missing
			}
		}
	}
	return "", true, nil
}

// ModelProviders lists the model providers the box holds a key for, sorted.
func (r *Registry) ModelProviders() []string {
	var out []string
	for _, in := range Catalog {
		if r.On(in.Name) {
			out = append(out, in.Switches.ModelProviders...)
		}
	}
	sort.Strings(out)
	return out
}

// Secrets returns the values of the box's secret variables (keys, secrets, DSNs,
// private keys) that are set, so runs can redact them from tool results.
// Identifiers such as an App id or slug are left out.
func (r *Registry) Secrets() []string {
	var out []string
	for name, v := range r.values {
		if secretName(name) {
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

func secretName(name string) bool {
	for _, part := range []string{"KEY", "SECRET", "TOKEN", "DSN"} {
		if strings.Contains(name, part) {
			return true
		}
	}
	return false
}
