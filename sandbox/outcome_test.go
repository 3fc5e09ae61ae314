package sandbox

import (
	"errors"
	"testing"
)

// The outcome names are the values of the sandbox metric's outcome label.
func TestExecOutcome(t *testing.T) {
	for _, c := range []struct {
		res  ExecResult
		err  error
		want string
	}{
		{ExecResult{}, nil, "ok"},
		{ExecResult{ExitCode: 2}, nil, "nonzero"},
		{ExecResult{ExitCode: ExitTimeout, TimedOut: true}, nil, "timeout"},
		{ExecResult{}, errors.New("no such sandbox"), "error"},
	} {
		if got := c.res.Outcome(c.err); got != c.want {
			t.Errorf("%+v, %v: %q, want %q", c.res, c.err, got, c.want)
		}
	}
}
