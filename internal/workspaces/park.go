package workspaces

import (
	"context"
	"time"

	"github.com/guilds/guilds/sandbox"
)

// DefaultParked is Options.Parked when zero.
const DefaultParked = time.Hour

// parkLocked is the idle stop on a driver that can park (sandbox.Parker):
// the sandbox's commands end and it is frozen, and the next call thaws it
// instead of starting a new one (ADR 0709). A parked sandbox no longer
// counts against the caps; it is removed after Options.Parked, or at once
// when parking fails.
func (m *Manager) parkLocked(ctx context.Context, s *space) error {
	p, ok := m.driver.(sandbox.Parker)
	if !ok || s.id == "" {
		return m.stopLocked(ctx, s, "idle")
	}
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	id := s.id
	if err := p.Park(ctx, id); err != nil {
		m.log.WarnContext(ctx, "parking an agent sandbox; removing it instead", "agent", s.agentID, "sandbox", id, "err", err)
		return m.stopLocked(ctx, s, "idle")
	}
	s.id, s.parked = "", id
	s.gen++
	m.unreserve(s.agentID)
	gen := s.gen
	keep := m.opts.Parked
	if keep <= 0 {
		keep = DefaultParked
	}
	s.idle = time.AfterFunc(keep, func() { m.dropParked(s, gen) })
	m.log.InfoContext(ctx, "agent sandbox parked", "agent", s.agentID, "sandbox", id)
	return nil
}

// unparkLocked brings the parked sandbox back as the running one; when it
// cannot (removed under the manager, an engine restart), the parked one is
// removed and the caller creates a new sandbox.
func (m *Manager) unparkLocked(ctx context.Context, s *space) bool {
	id := s.parked
	s.parked = ""
	if err := m.reserve(ctx, s.agentID); err != nil {
		s.parked = id // over a cap now: keep it parked for later
		return false
	}
	if err := m.driver.(sandbox.Parker).Unpark(ctx, id); err != nil {
		m.unreserve(s.agentID)
		m.log.WarnContext(ctx, "unparking an agent sandbox; starting a new one", "agent", s.agentID, "sandbox", id, "err", err)
		if err := m.driver.Remove(context.WithoutCancel(ctx), id); err != nil {
			m.log.WarnContext(ctx, "removing a parked agent sandbox", "agent", s.agentID, "sandbox", id, "err", err)
		}
		return false
	}
	s.id = id
	s.gen++
	return true
}

// dropParked removes a sandbox parked for Options.Parked.
func (m *Manager) dropParked(s *space, gen int) {
	s.Lock()
	defer s.Unlock()
	if s.gen != gen || s.parked == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.removeParkedLocked(ctx, s); err != nil {
		m.log.Warn("removing a parked agent sandbox", "agent", s.agentID, "err", err)
	}
}

func (m *Manager) removeParkedLocked(ctx context.Context, s *space) error {
	if s.parked == "" {
		return nil
	}
	if err := m.driver.Remove(ctx, s.parked); err != nil {
		return err
	}
	s.parked = ""
	return nil
}
