package main

import (
	"context"
	"time"

	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/internal/workspaces/stopbus"
)

// followWorkspaceStops carries out, until ctx ends, the stop orders the API
// sends (an agent, guild or organisation deleted, a run cancelled, an
// operator's stop or reset), and reaps the homes of deleted agents at start
// and then every idle period, for the orders this worker missed.
func (p *platform) followWorkspaceStops(ctx context.Context, m *workspaces.Manager) {
	if p.redis != nil {
		go func() {
			err := stopbus.Listen(ctx, p.redis, p.log, nil, func(ctx context.Context, o stopbus.Order) {
				if err := m.Apply(ctx, o); err != nil {
					p.log.WarnContext(ctx, "agent workspaces: a stop order failed", "why", o.Why, "err", err)
				}
			})
			if err != nil {
				p.log.ErrorContext(ctx, "agent workspaces: no stop orders reach this worker; deleted agents' homes wait for the reaper", "err", err)
			}
		}()
	}
	if p.db == nil {
		return
	}
	every := p.cfg.Sandbox.Idle
	if every <= 0 {
		every = workspaces.DefaultIdle
	}
	go func() {
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			existing := func(ctx context.Context, ids []string) (map[string]bool, error) {
				return orgs.ExistingAgents(ctx, p.db, ids)
			}
			if reaped, err := m.ReapHomes(ctx, existing); err != nil && ctx.Err() == nil {
				p.log.WarnContext(ctx, "agent workspaces: reaping the homes of deleted agents", "err", err)
			} else if len(reaped) > 0 {
				p.log.InfoContext(ctx, "agent workspaces: homes of deleted agents removed", "count", len(reaped))
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
}
