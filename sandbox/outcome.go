package sandbox

// Outcome names how an exec ended, as the sandbox metric counts it: "error"
// when it could not run (err), "timeout" when it was killed at its timeout,
// "nonzero" when the command exited non-zero, else "ok".
func (r ExecResult) Outcome(err error) string {
	switch {
	case err != nil:
		return "error"
	case r.TimedOut:
		return "timeout"
	case r.ExitCode != 0:
		return "nonzero"
	}
	return "ok"
}
