package code

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox/local"
)

// helperBin is guilds-code built for the host, shared by the tests that run
// it through the local driver.
var helperBin struct {
	once sync.Once
	path string
	err  error
}

func buildHelper(t testing.TB) string {
	t.Helper()
	helperBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "guilds-code-bin-")
		if err != nil {
			helperBin.err = err
			return
		}
		p := filepath.Join(dir, "guilds-code")
		cmd := exec.Command("go", "build", "-o", p, "github.com/guilds/guilds/cmd/guilds-code")
		if out, err := cmd.CombinedOutput(); err != nil {
			helperBin.err = &buildError{out: string(out), err: err}
			return
		}
		helperBin.path = p
	})
	if helperBin.err != nil {
		t.Fatalf("build guilds-code: %v", helperBin.err)
	}
	return helperBin.path
}

type buildError struct {
	out string
	err error
}

func (e *buildError) Error() string { return e.err.Error() + ": " + e.out }

// localWorkspace is the workspaces manager on the local driver: one
// sandbox per agent, created on first use, its home told to the helper.
type localWorkspace struct {
	*workspaces.Manager
	d *local.Driver
}

func newLocalWorkspace(t testing.TB) *localWorkspace {
	t.Helper()
	d, err := local.New(local.Options{AllowUnisolated: true, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m := workspaces.New(d, workspaces.Options{})
	t.Cleanup(func() { _ = m.Close(context.Background()) })
	return &localWorkspace{Manager: m, d: d}
}

// hostPath is where a sandbox path of the agent's workspace is on this host.
func (w *localWorkspace) hostPath(agentID, p string) (string, error) {
	return w.d.HostPath(w.SandboxID(agentID), p)
}
