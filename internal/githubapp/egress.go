package githubapp

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/integrations"
)

// Egress opens an agent's way to GitHub out of a sandbox without a network:
// its socket of the worker's proxy that dials only EgressHosts, as the
// sandbox sees it. "" = none is needed (the local driver's sandboxes have
// the host's network).
type Egress interface {
	OpenGitHub(agentID string) (string, error)
}

// githubDotCom are the hosts git and gh use on github.com: the web host
// (git over https), the API, archive downloads and release assets.
var githubDotCom = []string{"github.com:443", "api.github.com:443", "codeload.github.com:443", "objects.githubusercontent.com:443"}

const (
	defaultWebURL = "https://github.com"
	defaultAPIURL = "https://api.github.com"
)

// EgressHosts are the destinations (host:port) the coding agents' proxy
// dials for the App's web and API URLs: github.com's hosts by default, else
// the two configured hosts (GitHub Enterprise Server, or a local GitHub in
// tests). Private says the operator named those hosts
// (GUILDS_GITHUB_URL, GUILDS_GITHUB_API_URL), so their addresses may be
// private or loopback; for github.com they must be public.
func EgressHosts(webURL, apiURL string) (hosts []string, private bool, err error) {
	webURL, apiURL = baseURL(webURL, defaultWebURL), baseURL(apiURL, defaultAPIURL)
	if webURL == defaultWebURL && apiURL == defaultAPIURL {
		return slices.Clone(githubDotCom), false, nil
	}
	for name, raw := range map[string]string{EnvWebURL: webURL, EnvAPIURL: apiURL} {
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" || u.Scheme != "https" && u.Scheme != "http" {
			return nil, false, fmt.Errorf("%s: %q is not an http(s) URL", name, raw)
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
		}
		if h := net.JoinHostPort(strings.ToLower(u.Hostname()), port); !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	slices.Sort(hosts)
	return hosts, true, nil
}

// EgressFromRegistry is EgressHosts of the registry's URLs (the defaults
// when the App is not set up).
func EgressFromRegistry(reg *integrations.Registry) ([]string, bool, error) {
	return EgressHosts(reg.Value(Integration, EnvWebURL), reg.Value(Integration, EnvAPIURL))
}

// BeforeShell runs before each shell call of an agent: its socket to GitHub
// is opened again when its repositories come through a connected login (the
// socket closes after idle minutes, and a worker that restarted has none
// yet), and tokens close to their expiry are replaced. agent loads the
// agent's chain, only when needed.
func (g *Generations) BeforeShell(ctx context.Context, agentID string, agent func(context.Context) (Agent, error)) error {
	var a *Agent
	load := func() (Agent, error) {
		if a == nil {
			got, err := agent(ctx)
			if err != nil {
				return Agent{}, err
			}
			a = &got
		}
		return *a, nil
	}
	if g.Egress != nil {
		uses, known := g.usesEgress(agentID)
		if !known {
			got, err := load()
			if err != nil {
				return err
			}
			eff, err := EffectiveSelection(ctx, g.DB, got.OrgID, got.GuildID, got.ID)
			if err != nil {
				return err
			}
			uses = len(eff.Selected) > 0 && eff.Status == string(connstore.StatusConnected)
			g.setEgress(agentID, uses)
		}
		if uses {
			if _, err := g.Egress.OpenGitHub(agentID); err != nil {
				return fmt.Errorf("open the way to GitHub: %w", err)
			}
		}
	}
	if !g.Due(agentID) {
		return nil
	}
	got, err := load()
	if err != nil {
		return err
	}
	return g.Refresh(ctx, got)
}

func (g *Generations) usesEgress(agentID string) (uses, known bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	uses, known = g.egress[agentID]
	return uses, known
}

func (g *Generations) setEgress(agentID string, uses bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.egress == nil {
		g.egress = map[string]bool{}
	}
	g.egress[agentID] = uses
}
