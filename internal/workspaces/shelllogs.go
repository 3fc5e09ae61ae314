package workspaces

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/guilds/guilds/sandbox"
)

// dropLogsScript deletes every shell log under the home's run folders
// (codeops: .runs/<run>/<call>.log) and keeps the rest (each run's cwd).
// It runs with the home as its working directory on every driver.
const dropLogsScript = `[ -d .runs ] || exit 0; find .runs -type f -name '*.log' -delete`

// DropShellLogs deletes the agent's persistent shell logs, which hold
// commands' output unredacted: a secret that has left the agent's
// redaction set would otherwise come back in clear when a log is read.
// It acts only where this manager has the agent's home (a sandbox it holds,
// or a home volume its driver lists), starting a sandbox on the home if
// none runs; elsewhere there is nothing of the agent's to scrub.
func (m *Manager) DropShellLogs(ctx context.Context, agentID string) error {
	if err := checkAgent(agentID); err != nil {
		return err
	}
	if m.SandboxID(agentID) == "" {
		lister, ok := m.driver.(sandbox.VolumeLister)
		if !ok {
			return nil
		}
		names, err := lister.ListVolumes(ctx)
		if err != nil {
			return fmt.Errorf("workspaces: drop the shell logs of agent %s: %w", agentID, err)
		}
		if !slices.Contains(names, HomeVolume(agentID)) {
			return nil
		}
	}
	var res sandbox.ExecResult
	err := m.useWith(ctx, agentID, false, func(h handle) error {
		var err error
		res, err = m.driver.Exec(ctx, h.id, sandbox.ExecRequest{Cmd: []string{"sh", "-c", dropLogsScript}, Env: h.env,
			Timeout: time.Minute, MaxOutput: 4096})
		return err
	})
	if err != nil {
		return fmt.Errorf("workspaces: drop the shell logs of agent %s: %w", agentID, err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("workspaces: drop the shell logs of agent %s: exit %d: %s", agentID, res.ExitCode, res.Stderr)
	}
	return nil
}
