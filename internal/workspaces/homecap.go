package workspaces

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guilds/guilds/sandbox"
)

// DefaultHomeCheckEvery is Options.HomeCheckEvery when zero.
const DefaultHomeCheckEvery = 5 * time.Minute

// homeUsage is the last measure of an agent's home.
type homeUsage struct {
	mu      sync.Mutex
	at      time.Time
	bytes   int64
	checked bool
}

// HomeFullError refuses a call while the agent's home is over the cap, or
// fails one that found the home's disk full (DiskFull, homefull.go).
type HomeFullError struct {
	AgentID  string
	Used     int64
	Limit    int64 // 0: no cap set
	DiskFull bool
}

func (e *HomeFullError) Error() string {
	if e.DiskFull {
		return e.diskFullError()
	}
	return fmt.Sprintf("workspaces: the home of agent %s holds %d MiB, over its cap of %d MiB (GUILDS_MAX_HOME_GB): "+
		"an operator can reset it (POST /api/agents/%s/workspace/reset) or raise GUILDS_MAX_HOME_GB",
		e.AgentID, e.Used>>20, e.Limit>>20, e.AgentID)
}

// checkHome refuses the call when the agent's home is over
// Options.MaxHomeBytes. The home is measured (du, inside the sandbox) at
// most once per Options.HomeCheckEvery, and at every call while it is
// over, so a reset lets the next call through. A home volume has no
// quota on most engines, so the cap is kept here: a command may overshoot
// it once, and the calls after it are refused.
func (m *Manager) checkHome(ctx context.Context, s *space, h handle) error {
	if m.opts.MaxHomeBytes <= 0 {
		return nil
	}
	every := m.opts.HomeCheckEvery
	if every <= 0 {
		every = DefaultHomeCheckEvery
	}
	u := &s.home
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.checked && u.bytes <= m.opts.MaxHomeBytes && time.Since(u.at) < every {
		return nil
	}
	used, err := m.measureHome(ctx, h)
	if err != nil {
		m.log.WarnContext(ctx, "measuring an agent's home", "agent", s.agentID, "err", err)
		return nil // a home that cannot be measured is not refused for it
	}
	u.at, u.bytes, u.checked = time.Now(), used, true
	if used > m.opts.MaxHomeBytes {
		return &HomeFullError{AgentID: s.agentID, Used: used, Limit: m.opts.MaxHomeBytes}
	}
	return nil
}

func (m *Manager) measureHome(ctx context.Context, h handle) (int64, error) {
	res, err := m.driver.Exec(ctx, h.id, sandbox.ExecRequest{Cmd: []string{"du", "-sk", "."}, Env: h.env,
		Timeout: 2 * time.Minute, MaxOutput: 4096})
	if err != nil {
		return 0, err
	}
	fields := strings.Fields(string(res.Stdout))
	if len(fields) == 0 {
		return 0, fmt.Errorf("du said nothing (exit %d): %s", res.ExitCode, res.Stderr)
	}
	kib, err := strconv.ParseInt(fields[0], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("du said %q", res.Stdout)
	}
	return kib << 10, nil
}
