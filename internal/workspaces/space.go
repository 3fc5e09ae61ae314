package workspaces

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guilds/guilds/sandbox"
)

// space is one agent's workspace: at most one sandbox at a time.
type space struct {
	agentID string

	// mu is held while the sandbox is created or removed, so concurrent
	// first calls wait for one creation instead of making several.
	mu       chan struct{} // a mutex that a waiter can give up on (ctx)
	id       string        // the running sandbox; "" when there is none
	parked   string        // a parked sandbox (park.go), when id is ""
	env      map[string]string
	inflight int       // calls using the sandbox now
	lastUsed time.Time // when the last call returned
	idle     *time.Timer
	gen      int // bumps on every new sandbox, so a stale timer does nothing
	home     homeUsage
}

// handle is what a call needs of the sandbox it uses.
type handle struct {
	id  string
	env map[string]string
}

func newSpace(agentID string) *space {
	s := &space{agentID: agentID, mu: make(chan struct{}, 1)}
	return s
}

func (s *space) lock(ctx context.Context) error {
	select {
	case s.mu <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *space) unlock() { <-s.mu }

// Lock and Unlock let Stop, Close and SandboxID take the space without a
// context.
func (s *space) Lock()   { s.mu <- struct{}{} }
func (s *space) Unlock() { s.unlock() }

// use runs fn against the agent's sandbox. When fn finds the sandbox gone
// (removed or stopped under the manager: a crash, an engine restart), the
// sandbox is re-created once and fn runs again. fn is retried only on an
// error the driver gives before anything ran in the sandbox.
func (m *Manager) use(ctx context.Context, agentID string, fn func(handle) error) error {
	return m.useWith(ctx, agentID, true, fn)
}

// useWith is use; capHome false skips the home size cap, for the
// platform's own clean-up commands.
func (m *Manager) useWith(ctx context.Context, agentID string, capHome bool, fn func(handle) error) error {
	if err := checkAgent(agentID); err != nil {
		return err
	}
	s, err := m.space(agentID)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		h, err := m.acquire(ctx, s)
		if err != nil {
			return err
		}
		if capHome {
			if err := m.checkHome(ctx, s, h); err != nil {
				m.release(s, h.id, false)
				return err
			}
		}
		err = fn(h)
		gone := err != nil && attempt == 0 && m.gone(ctx, h.id, err)
		m.release(s, h.id, gone)
		if !gone {
			return err
		}
		m.log.WarnContext(ctx, "agent sandbox gone; re-creating it", "agent", agentID, "sandbox", h.id, "err", err)
	}
}

// gone reports whether err says the sandbox itself is missing or stopped.
// ErrNotFound also means a missing file, so the sandbox is asked directly.
func (m *Manager) gone(ctx context.Context, id string, err error) bool {
	if errors.Is(err, sandbox.ErrNotRunning) {
		return true
	}
	if !errors.Is(err, sandbox.ErrNotFound) {
		return false
	}
	_, perr := m.driver.Exec(ctx, id, sandbox.ExecRequest{Cmd: []string{"true"}, Dir: "/", Timeout: 30 * time.Second, MaxOutput: 1024})
	return errors.Is(perr, sandbox.ErrNotFound) || errors.Is(perr, sandbox.ErrNotRunning)
}

func (m *Manager) space(agentID string) (*space, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, ErrClosed
	}
	s := m.spaces[agentID]
	if s == nil {
		s = newSpace(agentID)
		m.spaces[agentID] = s
	}
	return s, nil
}

// acquire returns the running sandbox, creating it when there is none, and
// counts the caller in flight (which holds off the idle stop).
func (m *Manager) acquire(ctx context.Context, s *space) (handle, error) {
	if err := s.lock(ctx); err != nil {
		return handle{}, err
	}
	defer s.unlock()
	m.mu.Lock()
	closed := m.closed
	m.mu.Unlock()
	if closed {
		return handle{}, ErrClosed
	}
	if s.id == "" && (s.parked == "" || !m.unparkLocked(ctx, s)) {
		if err := m.createLocked(ctx, s); err != nil {
			return handle{}, err
		}
	}
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	s.inflight++
	return handle{id: s.id, env: s.env}, nil
}

// release counts the caller out and starts the idle clock when it was the
// last. gone drops the sandbox, so the next acquire creates a new one.
func (m *Manager) release(s *space, id string, gone bool) {
	s.Lock()
	defer s.Unlock()
	s.inflight--
	s.lastUsed = time.Now()
	if gone && s.id == id {
		// Best effort: a stopped container is still there to remove.
		if err := m.driver.Remove(context.Background(), id); err != nil {
			m.log.Warn("removing a dead agent sandbox", "agent", s.agentID, "sandbox", id, "err", err)
		}
		s.id, s.env = "", nil
		m.unreserve(s.agentID)
	}
	if s.inflight == 0 && s.id != "" {
		m.armIdle(s)
	}
}

func (m *Manager) armIdle(s *space) {
	if s.idle != nil {
		s.idle.Stop()
	}
	gen := s.gen
	s.idle = time.AfterFunc(m.opts.Idle, func() { m.idleStop(s, gen) })
}

// idleStop removes the sandbox if it is still the one the timer was set
// for and nothing used it since.
func (m *Manager) idleStop(s *space, gen int) {
	s.Lock()
	defer s.Unlock()
	if s.gen != gen || s.id == "" || s.inflight > 0 {
		return
	}
	if wait := m.opts.Idle - time.Since(s.lastUsed); wait > 0 {
		s.idle = time.AfterFunc(wait, func() { m.idleStop(s, gen) })
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := m.parkLocked(ctx, s); err != nil {
		m.log.Warn("idle stop of an agent sandbox", "agent", s.agentID, "err", err)
	}
}

// createLocked starts the agent's sandbox on its home volume.
func (m *Manager) createLocked(ctx context.Context, s *space) error {
	m.mu.Lock()
	bindsOf := m.opts.Binds
	m.mu.Unlock()
	var binds []sandbox.Bind
	if bindsOf != nil {
		var err error
		if binds, err = bindsOf(s.agentID); err != nil {
			return fmt.Errorf("workspaces: the mounts of agent %s: %w", s.agentID, err)
		}
	}
	if err := m.reserve(ctx, s.agentID); err != nil {
		return err
	}
	sb, err := m.driver.Create(ctx, sandbox.Spec{
		Binds:      binds,
		Image:      m.opts.Image,
		AgentID:    s.agentID,
		User:       m.opts.User,
		HomeVolume: HomeVolume(s.agentID),
		Memory:     m.opts.Memory,
		CPUs:       m.opts.CPUs,
		PidsLimit:  m.opts.PidsLimit,
	})
	if err != nil {
		m.unreserve(s.agentID)
		return fmt.Errorf("workspaces: start the sandbox of agent %s: %w", s.agentID, err)
	}
	env, err := m.homeEnv(sb.ID)
	if err != nil {
		_ = m.driver.Remove(context.WithoutCancel(ctx), sb.ID)
		m.unreserve(s.agentID)
		return err
	}
	s.id, s.env = sb.ID, env
	s.gen++
	m.log.InfoContext(ctx, "agent sandbox started", "agent", s.agentID, "sandbox", sb.ID)
	return nil
}

// stopLocked removes the sandbox, if any; the home volume stays.
func (m *Manager) stopLocked(ctx context.Context, s *space, why string) error {
	if s.idle != nil {
		s.idle.Stop()
		s.idle = nil
	}
	if err := m.removeParkedLocked(ctx, s); err != nil {
		return fmt.Errorf("workspaces: stop the parked sandbox of agent %s: %w", s.agentID, err)
	}
	if s.id == "" {
		return nil
	}
	id := s.id
	if err := m.driver.Remove(ctx, id); err != nil {
		return fmt.Errorf("workspaces: stop the sandbox of agent %s: %w", s.agentID, err)
	}
	s.id, s.env = "", nil
	s.gen++
	m.unreserve(s.agentID)
	m.log.InfoContext(ctx, "agent sandbox stopped", "agent", s.agentID, "sandbox", id, "why", why)
	return nil
}
