// Package testproc starts a helper process for a test (a local node, a
// published server) and waits for the line it prints once it is ready,
// never for a time: a loaded machine only makes the line come later.
package testproc

import (
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Bound is how long Start waits for the ready line: a failure bound, not a pace.
const Bound = 2 * time.Minute

// Output is what the process printed, safe to read while it runs.
type Output struct {
	mu    sync.Mutex
	b     bytes.Buffer
	want  string
	ready chan struct{}
	once  sync.Once
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.b.Write(p)
	if o.want != "" && strings.Contains(strings.ToLower(o.b.String()), o.want) {
		o.once.Do(func() { close(o.ready) })
	}
	return len(p), nil
}

func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// Start runs cmd in its own process group, killed when the test ends, and
// returns once its output holds ready (compared case-insensitively). A
// process that exits first, or stays silent past Bound, fails the test with
// what it printed.
func Start(t testing.TB, cmd *exec.Cmd, ready string) *Output {
	t.Helper()
	out := &Output{want: strings.ToLower(ready), ready: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", cmd.Path, err)
	}
	exited := make(chan struct{})
	var waitErr error
	go func() { waitErr = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	select {
	case <-out.ready:
		return out
	case <-exited:
		t.Fatalf("%s exited before it was ready (%v):\n%s", cmd.Path, waitErr, out)
	case <-time.After(Bound):
		t.Fatalf("%s printed no %q within %v:\n%s", cmd.Path, ready, Bound, out)
	}
	return nil
}
