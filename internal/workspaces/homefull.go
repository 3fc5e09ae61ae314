package workspaces

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/guilds/guilds/sandbox"
)

// noSpace is what a command or the file API says when a write found its
// disk full (ENOSPC, in the words of coreutils, busybox and git);
// overQuota, when a quota stopped it (EDQUOT).
const (
	noSpace   = "No space left on device"
	overQuota = "Disk quota exceeded"
)

// fullHomeLeft is the free space under which a home that saw ENOSPC is
// taken for full, rather than some other mount (/tmp) having run out.
const fullHomeLeft = 1 << 20

// homeFull turns a failure that says "no space left" into a HomeFullError
// when it is the home's disk that is full: a clear tool error naming the
// cap, instead of a command's bare exit status. Anything else is nil, and
// the caller's own result stands.
func (m *Manager) homeFull(ctx context.Context, agentID string, h handle, said ...[]byte) error {
	seen := false
	for _, b := range said {
		seen = seen || strings.Contains(string(b), noSpace) || strings.Contains(string(b), overQuota)
	}
	if !seen {
		return nil
	}
	// du and df are measured from the home itself: both are in every
	// image ADR 0702 allows (coreutils or busybox).
	res, err := m.driver.Exec(ctx, h.id, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "du -sk . | cut -f1; df -Pk . | tail -n 1"},
		Env: h.env, Dir: sandbox.HomeDir, Timeout: 2 * time.Minute, MaxOutput: 4096})
	if err != nil {
		return nil
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	if len(lines) != 2 {
		return nil
	}
	used, err1 := strconv.ParseInt(strings.TrimSpace(lines[0]), 10, 64)
	df := strings.Fields(lines[1])
	if err1 != nil || len(df) < 4 {
		return nil
	}
	avail, err := strconv.ParseInt(df[3], 10, 64)
	if err != nil || avail<<10 >= fullHomeLeft {
		return nil
	}
	m.log.WarnContext(ctx, "agent home full", "agent", agentID, "used_bytes", used<<10, "available_bytes", avail<<10)
	return &HomeFullError{AgentID: agentID, Used: used << 10, Limit: m.opts.MaxHomeBytes, DiskFull: true}
}

// IsHomeFull reports whether err refuses or fails a call because the
// agent's home is over its cap or its disk is full.
func IsHomeFull(err error) bool {
	var e *HomeFullError
	return errors.As(err, &e)
}

func (e *HomeFullError) diskFullError() string {
	limit := "is not set"
	if e.Limit > 0 {
		limit = fmt.Sprintf("is %d MiB", e.Limit>>20)
	}
	return fmt.Sprintf("workspaces: the home of agent %s is full: its disk has no space left, with %d MiB in the home "+
		"(the home cap GUILDS_MAX_HOME_GB %s): delete files from the home, or an operator can reset it "+
		"(POST /api/agents/%s/workspace/reset) or give the sandbox volumes more disk",
		e.AgentID, e.Used>>20, limit, e.AgentID)
}
