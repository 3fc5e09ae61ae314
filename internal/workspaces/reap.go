package workspaces

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/guilds/guilds/sandbox"
)

// ReapHomes removes the home volumes, and any sandbox this manager still
// holds, of agents that no longer exist: the agent's delete sent an order
// this worker missed (Redis down, the worker stopped), or the agent was
// created and deleted while its sandbox was starting. existing says which
// of the agent ids are still agents. It returns the agents it reaped. A
// driver that cannot list its volumes reaps nothing.
func (m *Manager) ReapHomes(ctx context.Context, existing func(ctx context.Context, agents []string) (map[string]bool, error)) ([]string, error) {
	lister, ok := m.driver.(sandbox.VolumeLister)
	if !ok {
		return nil, nil
	}
	names, err := lister.ListVolumes(ctx)
	if err != nil {
		return nil, fmt.Errorf("workspaces: reap homes: %w", err)
	}
	var agents []string
	for _, n := range names {
		if id, ok := strings.CutPrefix(n, HomeVolumePrefix); ok && id != "" {
			agents = append(agents, id)
		}
	}
	agents = append(agents, m.heldAgents()...)
	if len(agents) == 0 {
		return nil, nil
	}
	alive, err := existing(ctx, agents)
	if err != nil {
		return nil, fmt.Errorf("workspaces: reap homes: %w", err)
	}
	var reaped []string
	var errs []error
	seen := map[string]bool{}
	for _, id := range agents {
		if alive[id] || seen[id] {
			continue
		}
		seen[id] = true
		if err := m.RemoveHome(ctx, id); err != nil {
			errs = append(errs, err)
			continue
		}
		m.forget(id)
		reaped = append(reaped, id)
	}
	if len(reaped) > 0 {
		m.log.InfoContext(ctx, "homes of deleted agents removed", "count", len(reaped))
	}
	return reaped, errors.Join(errs...)
}

// heldAgents lists the agents the manager has a workspace for.
func (m *Manager) heldAgents() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.spaces))
	for id := range m.spaces {
		out = append(out, id)
	}
	return out
}

// forget drops a removed agent's workspace entry, unless a call is using it.
func (m *Manager) forget(agentID string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.spaces[agentID]
	if s == nil {
		return
	}
	select {
	case s.mu <- struct{}{}:
		if s.id == "" && s.parked == "" && s.inflight == 0 {
			delete(m.spaces, agentID)
		}
		<-s.mu
	default: // busy: leave it
	}
}
