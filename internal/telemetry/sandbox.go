package telemetry

import (
	"context"
	"time"

	"github.com/guilds/guilds/sandbox"
)

// Driver counts a sandbox driver's execs (guilds_sandbox_exec_duration_seconds);
// everything else passes through.
type Driver struct{ sandbox.Driver }

// CountExecs wraps d; a nil d stays nil.
func CountExecs(d sandbox.Driver) sandbox.Driver {
	if d == nil {
		return nil
	}
	if _, done := d.(Driver); done {
		return d
	}
	return Driver{d}
}

// Exec runs the command and observes it.
func (d Driver) Exec(ctx context.Context, id string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	start := time.Now()
	res, err := d.Driver.Exec(ctx, id, req)
	SandboxExec(execOutcome(res, err), time.Since(start))
	return res, err
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
