// Package workspaces owns the long-lived sandbox of each agent: created on
// the first call that needs it, reused across turns and runs, stopped after
// an idle period, and re-created transparently after an idle stop or a
// crash. The agent's /home/agent lives on a named volume
// (HomeVolume(agentID)), so what the agent left there survives all of that;
// everything else in the sandbox, background commands included, ends with
// the stop.
//
// One Manager serves one driver scope (config GUILDS_SANDBOX_SCOPE): at
// start, CleanupOrphans removes every sandbox of that scope it does not
// hold, the leftovers of an earlier worker.
//
// Decisions taken elsewhere reach the manager as stop orders (Apply, from
// the stopbus): a stop, a home removed, shell logs dropped. ReapHomes
// removes what deleted agents left when an order was missed. Caps bound
// the sandboxes per worker and per organisation (caps.go) and the size of
// a home (homecap.go). See ADR 0706.
package workspaces

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"sync"
	"time"

	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/internal/telemetry"
	"github.com/guilds/guilds/internal/workspaces/stopbus"
	"github.com/guilds/guilds/sandbox"
)

// Defaults of Options.
const (
	DefaultIdle  = 15 * time.Minute
	DefaultImage = "guilds-sandbox:latest"
	// DefaultUser is the image's unprivileged user, who owns /home/agent.
	DefaultUser = "agent"
)

// HomeVolumePrefix starts the name of every agent's home volume.
const HomeVolumePrefix = "guilds-home-"

// ErrClosed is returned by every call after Close.
var ErrClosed = errors.New("workspaces: manager closed")

// Options configure a Manager.
type Options struct {
	// Image of the sandboxes; empty = DefaultImage.
	Image string
	// Idle stops a sandbox unused for this long; 0 = DefaultIdle. The idle
	// clock starts when the last call in flight on it returns.
	Idle time.Duration
	// User runs the sandbox's processes; empty = DefaultUser.
	User string
	// Memory, CPUs and PidsLimit are the sandbox limits; 0 = the
	// sandbox package's defaults.
	Memory    int64
	CPUs      float64
	PidsLimit int64
	// Binds gives the host folders mounted in an agent's sandbox when it is
	// created (the browser proxy's socket folder); nil = none.
	Binds func(agentID string) ([]sandbox.Bind, error)
	// MaxSandboxes caps the sandboxes running at once on this manager
	// (GUILDS_MAX_SANDBOXES); 0 = no cap.
	MaxSandboxes int
	// MaxPerOrg caps them per organisation (GUILDS_MAX_SANDBOXES_PER_ORG),
	// which OrgOf names for an agent; 0 or a nil OrgOf = no cap.
	MaxPerOrg int
	OrgOf     func(ctx context.Context, agentID string) (string, error)
	// MaxHomeBytes caps what an agent keeps in its home (GUILDS_MAX_HOME_GB,
	// homecap.go), measured at most once per HomeCheckEvery
	// (0 = DefaultHomeCheckEvery); 0 = no cap.
	MaxHomeBytes   int64
	HomeCheckEvery time.Duration
	// Parked is how long a sandbox parked at its idle stop is kept for
	// the agent's next call before it is removed (park.go); 0 =
	// DefaultParked.
	Parked time.Duration
	// Logger receives lifecycle events; nil = discard.
	Logger *slog.Logger
}

// Manager keeps one sandbox per agent on a driver. It is safe for
// concurrent use.
type Manager struct {
	driver sandbox.Driver
	opts   Options
	log    *slog.Logger
	// closer is released by Close when the manager built the driver.
	closer io.Closer

	mu      sync.Mutex
	spaces  map[string]*space
	running map[string]string // agent → organisation, of every sandbox counted against the caps (caps.go)
	closed  bool
}

// hostPather is the local driver's way to name the host directory that
// stands for a sandbox path.
type hostPather interface {
	HostPath(id, p string) (string, error)
}

// New returns a manager; it starts nothing until the first call.
func New(driver sandbox.Driver, opts Options) *Manager {
	if opts.Image == "" {
		opts.Image = DefaultImage
	}
	if opts.Idle <= 0 {
		opts.Idle = DefaultIdle
	}
	if opts.User == "" {
		opts.User = DefaultUser
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Manager{driver: driver, opts: opts, log: opts.Logger, spaces: map[string]*space{}, running: map[string]string{}}
}

// SetBinds sets Options.Binds on a manager built by FromConfig; call it
// before the first call.
func (m *Manager) SetBinds(f func(agentID string) ([]sandbox.Bind, error)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opts.Binds = f
}

// SetOrgOf sets Options.OrgOf on a manager built by FromConfig; call it
// before the first call.
func (m *Manager) SetOrgOf(f func(ctx context.Context, agentID string) (string, error)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.opts.OrgOf = f
}

// HomeVolume is the name of the volume that holds an agent's /home/agent.
func HomeVolume(agentID string) string { return HomeVolumePrefix + agentID }

func checkAgent(agentID string) error {
	if agentID == "" {
		return fmt.Errorf("%w: agentID is empty", sandbox.ErrInvalid)
	}
	if err := sandbox.CheckVolumeName(HomeVolume(agentID)); err != nil {
		return fmt.Errorf("%w: agentID %q must be letters, digits, '_', '.' or '-'", sandbox.ErrInvalid, agentID)
	}
	return nil
}

// Exec runs a command in the agent's sandbox, creating the sandbox first
// if it has none, and re-creating it once if it turns out to be gone.
//
// Each call is one observation of guilds_sandbox_exec_duration_seconds: the
// time of the command's last attempt on the driver (a sandbox's creation is
// not in it), or, when it never reached the driver, of the whole call.
func (m *Manager) Exec(ctx context.Context, agentID string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	var res sandbox.ExecResult
	start := time.Now()
	err := m.use(ctx, agentID, func(h handle) error {
		r := req
		if len(h.env) > 0 {
			r.Env = make(map[string]string, len(h.env)+len(req.Env))
			maps.Copy(r.Env, h.env)
			maps.Copy(r.Env, req.Env)
		}
		var err error
		start = time.Now()
		res, err = m.driver.Exec(ctx, h.id, r)
		if err == nil && res.ExitCode != 0 {
			err = m.homeFull(ctx, agentID, h, res.Stderr, res.Stdout)
		}
		return err
	})
	telemetry.SandboxExec(res.Outcome(err), time.Since(start))
	return res, err
}

// CopyTo writes a file into the agent's sandbox (see sandbox.Driver.CopyTo).
func (m *Manager) CopyTo(ctx context.Context, agentID, path string, content []byte, mode fs.FileMode) error {
	return m.use(ctx, agentID, func(h handle) error {
		err := m.driver.CopyTo(ctx, h.id, path, content, mode)
		if err != nil {
			if full := m.homeFull(ctx, agentID, h, []byte(err.Error())); full != nil {
				return full
			}
		}
		return err
	})
}

// CopyFrom reads a file from the agent's sandbox (see sandbox.Driver.CopyFrom).
func (m *Manager) CopyFrom(ctx context.Context, agentID, path string) (sandbox.File, error) {
	var f sandbox.File
	err := m.use(ctx, agentID, func(h handle) error {
		var err error
		f, err = m.driver.CopyFrom(ctx, h.id, path)
		return err
	})
	return f, err
}

// SandboxID returns the agent's current sandbox, or "" when it has none
// running (never started, or stopped).
func (m *Manager) SandboxID(agentID string) string {
	m.mu.Lock()
	s := m.spaces[agentID]
	m.mu.Unlock()
	if s == nil {
		return ""
	}
	s.Lock()
	defer s.Unlock()
	return s.id
}

// Stop removes the agent's sandbox now, ending every command in it; the
// home volume is kept and the next call starts a new sandbox on it.
func (m *Manager) Stop(ctx context.Context, agentID string) error {
	m.mu.Lock()
	s := m.spaces[agentID]
	m.mu.Unlock()
	if s == nil {
		return nil
	}
	s.Lock()
	defer s.Unlock()
	return m.stopLocked(ctx, s, "stopped")
}

// RemoveHome stops the agent's sandbox and deletes its home volume: what
// the agent kept in /home/agent is gone for good.
func (m *Manager) RemoveHome(ctx context.Context, agentID string) error {
	if err := checkAgent(agentID); err != nil {
		return err
	}
	if err := m.Stop(ctx, agentID); err != nil {
		return err
	}
	if err := m.driver.RemoveVolume(ctx, HomeVolume(agentID)); err != nil {
		return fmt.Errorf("workspaces: remove the home of agent %s: %w", agentID, err)
	}
	return nil
}

// Close stops every sandbox the manager holds (home volumes are kept) and
// refuses further calls.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	spaces := make([]*space, 0, len(m.spaces))
	for _, s := range m.spaces {
		spaces = append(spaces, s)
	}
	m.mu.Unlock()
	var errs []error
	for _, s := range spaces {
		s.Lock()
		errs = append(errs, m.stopLocked(ctx, s, "closed"))
		s.Unlock()
	}
	if m.closer != nil {
		errs = append(errs, m.closer.Close())
	}
	return errors.Join(errs...)
}

// CleanupOrphans removes every sandbox of the driver's scope that this
// manager does not hold: the leftovers of an earlier worker (stopped or
// crashed). Call it once at worker start. Home volumes are kept.
func (m *Manager) CleanupOrphans(ctx context.Context) ([]sandbox.Sandbox, error) {
	list, err := m.driver.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("workspaces: cleanup: %w", err)
	}
	held := m.heldIDs()
	var removed []sandbox.Sandbox
	var errs []error
	for _, sb := range list {
		if held[sb.ID] {
			continue
		}
		if err := m.driver.Remove(ctx, sb.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, sb)
	}
	if len(removed) > 0 {
		m.log.InfoContext(ctx, "orphaned sandboxes removed", "count", len(removed))
	}
	return removed, errors.Join(errs...)
}

func (m *Manager) heldIDs() map[string]bool {
	m.mu.Lock()
	spaces := make([]*space, 0, len(m.spaces))
	for _, s := range m.spaces {
		spaces = append(spaces, s)
	}
	m.mu.Unlock()
	held := map[string]bool{}
	for _, s := range spaces {
		s.Lock()
		for _, id := range []string{s.id, s.parked} {
			if id != "" {
				held[id] = true
			}
		}
		s.Unlock()
	}
	return held
}

// homeEnv is the environment every exec of a new sandbox gets: in local
// mode the helper must be told where /home/agent is on the host.
func (m *Manager) homeEnv(id string) (map[string]string, error) {
	hp, ok := m.driver.(hostPather)
	if !ok {
		return nil, nil
	}
	home, err := hp.HostPath(id, sandbox.HomeDir)
	if err != nil {
		return nil, fmt.Errorf("workspaces: home of sandbox %s: %w", id, err)
	}
	return map[string]string{codeproto.HomeEnv: home}, nil
}

// Apply carries out a stop order: each agent's sandbox is removed, and
// with o.RemoveHome its home volume too. A failure for one agent does not
// keep the others from theirs.
func (m *Manager) Apply(ctx context.Context, o stopbus.Order) error {
	var errs []error
	for _, agent := range o.Agents {
		var err error
		if o.DropShellLogs {
			// The background commands started with the secret in their
			// environment end too.
			if err = m.DropShellLogs(ctx, agent); err == nil {
				err = m.Stop(ctx, agent)
			}
		} else if o.RemoveHome {
			if err = m.RemoveHome(ctx, agent); err == nil {
				m.forget(agent)
			}
		} else {
			err = m.Stop(ctx, agent)
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		m.log.InfoContext(ctx, "agent workspace order carried out", "agent", agent, "home_removed", o.RemoveHome,
			"shell_logs_dropped", o.DropShellLogs, "why", o.Why)
	}
	return errors.Join(errs...)
}

// Probe asks the sandbox engine for its list of sandboxes: nil when it answers.
func (m *Manager) Probe(ctx context.Context) error {
	_, err := m.driver.List(ctx)
	return err
}
