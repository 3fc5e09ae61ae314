package helper_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/helper"
	"github.com/guilds/guilds/sandbox/local"
)

// laneRequest and laneResponse are testdata/lanehelper's.
type laneRequest struct {
	Mode   string `json:"mode"`
	Pad    string `json:"pad,omitempty"`
	Secret string `json:"secret,omitempty"`
}

type laneResponse struct {
	PadBytes int    `json:"pad_bytes"`
	Secret   string `json:"secret"`
	Cmdline  string `json:"cmdline"`
}

// localWorkspace is one agent's sandbox on the local driver, with every
// exec recorded.
type localWorkspace struct {
	d  *local.Driver
	id string

	mu    sync.Mutex
	execs []sandbox.ExecRequest
}

func (w *localWorkspace) Exec(ctx context.Context, _ string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	w.mu.Lock()
	w.execs = append(w.execs, req)
	w.mu.Unlock()
	return w.d.Exec(ctx, w.id, req)
}

func (w *localWorkspace) CopyTo(ctx context.Context, _, path string, content []byte, mode os.FileMode) error {
	return w.d.CopyTo(ctx, w.id, path, content, mode)
}

func (w *localWorkspace) lastArg() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	cmd := w.execs[len(w.execs)-1].Cmd
	return cmd[len(cmd)-1]
}

func buildLaneHelper(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "lanehelper")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/lanehelper").CombinedOutput(); err != nil {
		t.Fatalf("build the test helper: %v\n%s", err, out)
	}
	return bin
}

// The lane on the local driver against a real helper process: a short
// request on the command line, a long one and a secret one through a
// request file the helper deletes (the secret never in its argv), and the
// three ways an exec fails to answer.
func TestTheLane(t *testing.T) {
	bin := buildLaneHelper(t)
	d, err := local.New(local.Options{AllowUnisolated: true, Root: t.TempDir(), Scope: "helper-lane-test"})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := d.Create(context.Background(), sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	ws := &localWorkspace{d: d, id: sb.ID}
	requests, err := d.HostPath(sb.ID, helper.RequestDir)
	if err != nil {
		t.Fatal(err)
	}
	const secret = "s3cr3t-value-never-in-argv"
	long := strings.Repeat("p", helper.MaxArgBytes)
	opts := helper.Options{Binary: bin, Helper: "lane helper", What: "lane_test", Timeout: time.Minute}

	for _, c := range []struct {
		name    string
		req     laneRequest
		edit    func(*helper.Options)
		file    bool   // the request travels as a request file
		wantErr string // "" = an answer
	}{
		{name: "short request on the command line", req: laneRequest{Mode: "echo", Pad: "abc"}},
		{name: "long request to a file", req: laneRequest{Mode: "echo", Pad: long}, file: true},
		{name: "secret to a file", req: laneRequest{Mode: "echo", Secret: secret}, edit: func(o *helper.Options) { o.Secret = true }, file: true},
		{name: "non-zero exit", req: laneRequest{Mode: "exit"}, wantErr: "the lane helper failed (exit 3): lanehelper: the thing broke"},
		{name: "timeout", req: laneRequest{Mode: "hang"}, edit: func(o *helper.Options) { o.Timeout = 2 * time.Second },
			// the helper never answers: the bound only has to outlast a slow start
			wantErr: "lane_test did not finish within 2s"},
		{name: "truncation", req: laneRequest{Mode: "flood"}, edit: func(o *helper.Options) { o.MaxOutput = 4096 },
			wantErr: "the lane helper's answer was too long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := opts
			if c.edit != nil {
				c.edit(&o)
			}
			resp, err := helper.Call[laneRequest, laneResponse](context.Background(), ws, "agent-1", c.req, o)
			if c.wantErr != "" {
				if err == nil || err.Error() != c.wantErr {
					t.Fatalf("err = %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if resp.PadBytes != len(c.req.Pad) || resp.Secret != c.req.Secret {
				t.Fatalf("the helper received %d pad bytes and secret %q", resp.PadBytes, resp.Secret)
			}
			if arg := ws.lastArg(); strings.HasPrefix(arg, "@") != c.file {
				t.Fatalf("argument %.80q: request file = %v, want %v", arg, !c.file, c.file)
			}
			if strings.Contains(resp.Cmdline, secret) || strings.Contains(ws.lastArg(), secret) {
				t.Fatalf("the secret is in the helper's command line: %q", resp.Cmdline)
			}
			if left, _ := os.ReadDir(requests); len(left) != 0 {
				t.Fatalf("request files left behind: %v", left)
			}
		})
	}
}

// noWorkspace is the worker's empty slot: it wraps the one identity.
type noWorkspace struct{}

func (noWorkspace) Exec(context.Context, string, sandbox.ExecRequest) (sandbox.ExecResult, error) {
	return sandbox.ExecResult{}, fmt.Errorf("the slot: %w", sandbox.ErrNoWorkspace)
}

func (noWorkspace) CopyTo(context.Context, string, string, []byte, os.FileMode) error {
	return fmt.Errorf("the slot: %w", sandbox.ErrNoWorkspace)
}

// Without a workspace a call fails with sandbox.ErrNoWorkspace itself,
// whether none was given, or the workspace answers it on exec or on the
// request file.
func TestNoWorkspaceIsOneError(t *testing.T) {
	o := helper.Options{Binary: "/nowhere", Helper: "lane helper", What: "lane_test", Timeout: time.Minute}
	for name, c := range map[string]struct {
		ws  sandbox.Workspace
		req laneRequest
		o   helper.Options
	}{
		"none":         {nil, laneRequest{Mode: "echo"}, o},
		"exec":         {noWorkspace{}, laneRequest{Mode: "echo"}, o},
		"request file": {noWorkspace{}, laneRequest{Mode: "echo", Secret: "x"}, helper.Options{Binary: "/nowhere", Secret: true}},
	} {
		_, err := helper.Call[laneRequest, laneResponse](context.Background(), c.ws, "agent-1", c.req, c.o)
		if err != sandbox.ErrNoWorkspace { //nolint:errorlint // the identity itself, not a wrapping of it
			t.Errorf("%s: %v", name, err)
		}
	}
	if !errors.Is(fmt.Errorf("x: %w", sandbox.ErrNoWorkspace), sandbox.ErrNoWorkspace) {
		t.Fatal("errors.Is")
	}
}
