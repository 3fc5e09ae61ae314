package workspaces

import (
	"context"
	"fmt"
)

// LimitError refuses a new sandbox that would take the worker past one of
// its caps; Setting names the variable that sets it.
type LimitError struct {
	Setting string // GUILDS_MAX_SANDBOXES or GUILDS_MAX_SANDBOXES_PER_ORG
	Limit   int
	Scope   string // "this worker" or "organisation <id>"
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("workspaces: %s already runs %d agent sandboxes (%s); try again when one stops (idle stop), or ask the operator to raise %s",
		e.Scope, e.Limit, e.Setting, e.Setting)
}

// reserve counts the agent's new sandbox against the caps before it is
// created; unreserve gives the place back when it stops or fails to start.
// The count lives under m.mu, not in the spaces, so two agents starting at
// once never wait on each other's locks.
func (m *Manager) reserve(ctx context.Context, agentID string) error {
	m.mu.Lock()
	orgOf := m.opts.OrgOf
	m.mu.Unlock()
	org := ""
	if orgOf != nil && m.opts.MaxPerOrg > 0 {
		var err error
		if org, err = orgOf(ctx, agentID); err != nil {
			return fmt.Errorf("workspaces: the organisation of agent %s: %w", agentID, err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.opts.MaxSandboxes > 0 && len(m.running) >= m.opts.MaxSandboxes {
		return &LimitError{Setting: "GUILDS_MAX_SANDBOXES", Limit: m.opts.MaxSandboxes, Scope: "this worker"}
	}
	if org != "" {
		n := 0
		for _, o := range m.running {
			if o == org {
				n++
			}
		}
		if n >= m.opts.MaxPerOrg {
			return &LimitError{Setting: "GUILDS_MAX_SANDBOXES_PER_ORG", Limit: m.opts.MaxPerOrg, Scope: "organisation " + org}
		}
	}
	m.running[agentID] = org
	return nil
}

func (m *Manager) unreserve(agentID string) {
	m.mu.Lock()
	delete(m.running, agentID)
	m.mu.Unlock()
}
