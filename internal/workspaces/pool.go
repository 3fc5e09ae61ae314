package workspaces

import (
	"context"
	"fmt"

	"github.com/guilds/guilds/sandbox"
)

// StartPool asks the driver to keep size sandboxes ready for agents that
// have none running or parked (GUILDS_SANDBOX_POOL, ADR 0712): created
// with the manager's image, user and limits, and given the agent's home
// and binds (at bindTargets) only when a call claims one. A driver that
// cannot pool returns an error and the manager creates every sandbox on
// demand, as without a pool. The pool's sandboxes are not agents' and do
// not count against the caps.
func (m *Manager) StartPool(ctx context.Context, size int, bindTargets ...string) error {
	if size <= 0 {
		return nil
	}
	p, ok := m.driver.(sandbox.Pooler)
	if !ok {
		return fmt.Errorf("workspaces: the %T sandbox driver keeps no pool", m.driver)
	}
	return p.StartPool(ctx, sandbox.Pool{Size: size, BindTargets: bindTargets, Template: sandbox.Spec{
		Image: m.opts.Image, User: m.opts.User, Memory: m.opts.Memory, CPUs: m.opts.CPUs, PidsLimit: m.opts.PidsLimit,
	}})
}
