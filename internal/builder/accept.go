package builder

import (
	"context"
	"fmt"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Created is what Accept made.
type Created struct {
	Guild    orgs.Guild       `json:"guild"`
	Agents   []orgs.Agent     `json:"agents"`
	Bindings []grants.Binding `json:"bindings"`
}

// Accept creates the proposal's guild, agents, prompts and switches with db,
// which must be one transaction: a refusal anywhere leaves nothing behind.
// maxAgents is the organisation's agent cap (0: none).
func Accept(ctx context.Context, db store.DB, p access.Principal, offers *grants.Service, integ *integrations.Registry,
	orgID string, pr Proposal, maxAgents int) (Created, error) {
	if _, err := orgs.GetOrg(ctx, db, p, orgID); err != nil {
		return Created{}, err
	}
	published, err := Published(ctx, db, integ)
	if err != nil {
		return Created{}, err
	}
	if err := pr.Check(published); err != nil {
		return Created{}, err
	}
	out := Created{Agents: []orgs.Agent{}, Bindings: []grants.Binding{}}
	out.Guild, err = orgs.CreateGuild(ctx, db, p, orgID, orgs.GuildInput{Name: &pr.Guild.Name, Description: &pr.Guild.Description})
	if err != nil {
		return Created{}, prefixed(err, "guild.")
	}
	put := func(field string, in grants.BindingInput) error {
		b, err := offers.PutBinding(ctx, db, p, in)
		if err != nil {
			return prefixed(err, field+".")
		}
		out.Bindings = append(out.Bindings, b)
		return nil
	}
	for j, sw := range pr.Switches {
		if err := put(fmt.Sprintf("switches.%d", j), sw.binding(grants.ScopeGuild, out.Guild.ID)); err != nil {
			return Created{}, err
		}
	}
	for i, a := range pr.Agents {
		in := orgs.AgentInput{Name: &a.Name, Prompt: &a.Prompt}
		if a.Model != "" {
			in.Model = &pr.Agents[i].Model
		}
		agent, err := orgs.CreateAgent(ctx, db, p, out.Guild.ID, in, maxAgents)
		if err != nil {
			return Created{}, prefixed(err, fmt.Sprintf("agents.%d.", i))
		}
		out.Agents = append(out.Agents, agent)
		for j, sw := range a.Switches {
			if err := put(fmt.Sprintf("agents.%d.switches.%d", i, j), sw.binding(grants.ScopeAgent, agent.ID)); err != nil {
				return Created{}, err
			}
		}
	}
	return out, nil
}

// prefixed names a validation problem by its place in the proposal.
func prefixed(err error, prefix string) error {
	v, ok := err.(*validation.Error)
	if !ok {
		return err
	}
	out := &validation.Error{}
	for _, pr := range v.Problems {
		out.Problems = append(out.Problems, validation.Problem{Field: prefix + pr.Field, Message: pr.Message})
	}
	return out
}
