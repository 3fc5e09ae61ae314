package telemetry

import "time"

// SandboxExec observes one command run in an agent's sandbox
// (guilds_sandbox_exec_duration_seconds) by its outcome, as
// sandbox.ExecResult.Outcome names it: ok, nonzero, timeout or error.
//
// The caller that runs the command observes it (internal/workspaces), not a
// wrapper around the driver: a wrapper would hide the driver's optional
// methods (the local driver's HostPath) from the type assertions that look
// for them. Telemetry takes the outcome's name, not the driver's result, so
// that it stays below the sandbox in the import graph.
func SandboxExec(outcome string, d time.Duration) {
	sandboxExecs.WithLabelValues(outcome).Observe(d.Seconds())
}
