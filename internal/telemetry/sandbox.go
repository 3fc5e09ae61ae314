package telemetry

import (
	"time"

	"github.com/guilds/guilds/sandbox"
)

// SandboxExec observes one command run in an agent's sandbox
// (guilds_sandbox_exec_duration_seconds), by its outcome: ok, nonzero (the
// command exited non-zero), timeout, or error (it could not run).
//
// The caller that runs the command observes it (internal/workspaces), not a
// wrapper around the driver: a wrapper would hide the driver's optional
// methods (the local driver's HostPath) from the type assertions that look
// for them.
func SandboxExec(res sandbox.ExecResult, err error, d time.Duration) {
	sandboxExecs.WithLabelValues(execOutcome(res, err)).Observe(d.Seconds())
}

func execOutcome(res sandbox.ExecResult, err error) string {
	switch {
	case err != nil:
		return "error"
	case res.TimedOut:
		return "timeout"
	case res.ExitCode != 0:
		return "nonzero"
	}
	return "ok"
}
