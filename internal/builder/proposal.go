// Package builder is the guild builder: a coach (a model with builder
// tools) drafts a guild from an operator's description of its job, and
// Accept creates the guild, its agents, their prompts and their tool
// switches in one transaction. A draft names only published servers with
// published tools.
package builder

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Switch turns a published server, or one of its published tools, on or off.
type Switch struct {
	Server string `json:"server"`         // a published server's slug
	Tool   string `json:"tool,omitempty"` // one of its published tools; "" means the whole server
	On     bool   `json:"on"`
}

// AgentDraft is one agent of a draft.
type AgentDraft struct {
	Name     string   `json:"name"`
	Prompt   string   `json:"prompt"`
	Model    string   `json:"model,omitempty"`
	Switches []Switch `json:"switches"`
}

// GuildDraft is the guild itself.
type GuildDraft struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Proposal is what the coach proposes and the operator edits and accepts.
// Switches apply to the whole guild; an agent's own apply to it alone.
type Proposal struct {
	Guild    GuildDraft   `json:"guild"`
	Agents   []AgentDraft `json:"agents"`
	Switches []Switch     `json:"switches"`
	// Why is the coach's explanation, shown to the operator; never stored.
	Why string `json:"why,omitempty"`
}

// Bounds of a draft.
const (
	MaxAgents   = 20
	MaxSwitches = 200
)

// PublishedServer is a published server that publishes tools: all a draft may name.
type PublishedServer struct {
	Slug        string          `json:"slug"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Tools       []PublishedTool `json:"tools"`
}

// PublishedTool is one published tool of a server.
type PublishedTool struct {
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Published lists the published servers with at least one published tool.
func Published(ctx context.Context, db store.DB, integ *integrations.Registry) ([]PublishedServer, error) {
	servers, err := grants.ListServers(ctx, db, integ, true)
	if err != nil {
		return nil, err
	}
	out := []PublishedServer{}
	for _, s := range servers {
		if !s.Published || len(s.Tools) == 0 {
			continue
		}
		ps := PublishedServer{Slug: s.Slug, Name: s.Name, Description: s.Description}
		for _, t := range s.Tools {
			ps.Tools = append(ps.Tools, PublishedTool{Name: t.Name, Description: t.Description})
		}
		out = append(out, ps)
	}
	return out, nil
}

// Check validates a proposal against the published catalog.
func (pr Proposal) Check(published []PublishedServer) error {
	var probs validation.Problems
	bySlug := map[string]PublishedServer{}
	for _, s := range published {
		bySlug[s.Slug] = s
	}
	probs.Check(strings.TrimSpace(pr.Guild.Name) != "", "guild.name", "is required")
	probs.Check(len(pr.Agents) > 0, "agents", "needs at least one agent")
	probs.Check(len(pr.Agents) <= MaxAgents, "agents", "must be at most %d", MaxAgents)
	n := len(pr.Switches)
	seen := map[string]bool{}
	for i, a := range pr.Agents {
		name := strings.ToLower(strings.TrimSpace(a.Name))
		probs.Check(name != "", fmt.Sprintf("agents.%d.name", i), "is required")
		probs.Check(name == "" || !seen[name], fmt.Sprintf("agents.%d.name", i), "is the name of another agent of the draft")
		seen[name] = true
		checkSwitches(&probs, fmt.Sprintf("agents.%d.switches", i), a.Switches, bySlug)
		n += len(a.Switches)
	}
	checkSwitches(&probs, "switches", pr.Switches, bySlug)
	probs.Check(n <= MaxSwitches, "switches", "a draft may hold at most %d switches", MaxSwitches)
	return probs.Err()
}

func checkSwitches(probs *validation.Problems, field string, list []Switch, bySlug map[string]PublishedServer) {
	for j, sw := range list {
		f := fmt.Sprintf("%s.%d", field, j)
		srv, ok := bySlug[sw.Server]
		if !ok {
			probs.Add(f+".server", "%q is not a published server with published tools", sw.Server)
			continue
		}
		if sw.Tool == "" {
			continue
		}
		found := false
		for _, t := range srv.Tools {
			found = found || t.Name == sw.Tool
		}
		probs.Check(found, f+".tool", "%q is not a published tool of %s", sw.Tool, srv.Name)
	}
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// binding is the grant a switch writes at a scope.
func (sw Switch) binding(scope grants.Scope, id string) grants.BindingInput {
	on := sw.On
	in := grants.BindingInput{Scope: scope, ScopeID: id, CatalogKind: grants.KindMCP, CatalogID: sw.Server, Enabled: &on}
	if sw.Tool != "" {
		in.CatalogKind, in.CatalogID = grants.KindMCPTool, sw.Server+"_"+unsafeName.ReplaceAllString(sw.Tool, "_")
	}
	return in
}
