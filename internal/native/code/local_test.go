package code

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/guilds/guilds/sandbox"
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

// localWorkspace gives each agent one sandbox of the local driver, created
// on first use, the way internal/workspaces does with any driver.
type localWorkspace struct {
	d   *local.Driver
	mu  sync.Mutex
	ids map[string]string
}

func newLocalWorkspace(t testing.TB) *localWorkspace {
	t.Helper()
	d, err := local.New(local.Options{AllowUnisolated: true, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return &localWorkspace{d: d, ids: map[string]string{}}
}

func (w *localWorkspace) id(ctx context.Context, agentID string) (string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if id, ok := w.ids[agentID]; ok {
		return id, nil
	}
	sb, err := w.d.Create(ctx, sandbox.Spec{AgentID: agentID, HomeVolume: "home-" + agentID})
	if err != nil {
		return "", err
	}
	w.ids[agentID] = sb.ID
	return sb.ID, nil
}

func (w *localWorkspace) Exec(ctx context.Context, agentID string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	id, err := w.id(ctx, agentID)
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	return w.d.Exec(ctx, id, req)
}

func (w *localWorkspace) CopyTo(ctx context.Context, agentID, p string, content []byte, mode fs.FileMode) error {
	id, err := w.id(ctx, agentID)
	if err != nil {
		return err
	}
	return w.d.CopyTo(ctx, id, p, content, mode)
}

func (w *localWorkspace) HostPath(ctx context.Context, agentID, p string) (string, error) {
	id, err := w.id(ctx, agentID)
	if err != nil {
		return "", err
	}
	return w.d.HostPath(id, p)
}
