// Package sandboxtest is the behaviour every sandbox.Driver must show,
// written once and run against each driver by its own tests.
package sandboxtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/sandbox"
)

// Options adapt the suite to a driver.
type Options struct {
	// Image for Spec.Image; it must provide sh, cat, sleep, kill and echo.
	Image string
	// Unmanaged creates something in the driver's territory that the
	// platform did not create, and returns a function reporting whether it
	// still exists. List and Cleanup must leave it alone.
	Unmanaged func(t *testing.T) (exists func() bool)
}

// Run runs the suite. The driver must be scoped to this test (a scope no
// one else uses), because the suite cleans up everything it manages.
func Run(t *testing.T, d sandbox.Driver, opts Options) {
	ctx := context.Background()
	spec := sandbox.Spec{
		Image: opts.Image, AgentID: "agent-1", RunID: "run-1",
		Memory: 128 << 20, CPUs: 0.5,
		Env:    map[string]string{"SPEC_VAR": "from-spec", "SHARED": "spec"},
		Labels: map[string]string{"team": "blue"},
	}
	sb, err := d.Create(ctx, spec)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	t.Cleanup(func() { _ = d.Remove(context.Background(), sb.ID) })

	// The group returns once all its parallel subtests are done with sb.
	t.Run("group", func(t *testing.T) { parallel(t, d, sb, opts) })
	t.Run("home volume outlives the sandbox", func(t *testing.T) { homeVolume(t, d, opts) })
	cleanupAll(t, d, sb.ID, opts)
}

// homeVolume checks Spec.HomeVolume and RemoveVolume. It runs alone: the
// list subtest counts the sandboxes.
func homeVolume(t *testing.T, d sandbox.Driver, opts Options) {
	ctx := context.Background()
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "guilds-test-home-" + hex.EncodeToString(b[:])
	t.Cleanup(func() { _ = d.RemoveVolume(context.Background(), name) })
	spec := sandbox.Spec{Image: opts.Image, AgentID: "agent-home", HomeVolume: name}
	create := func() sandbox.Sandbox {
		t.Helper()
		sb, err := d.Create(ctx, spec)
		if err != nil {
			t.Fatalf("create with home volume: %v", err)
		}
		t.Cleanup(func() { _ = d.Remove(context.Background(), sb.ID) })
		return sb
	}

	first := create()
	res := mustExec(t, d, first.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", `mkdir -p notes && echo kept > notes/a && echo "$HOME" && pwd`}})
	if res.ExitCode != 0 {
		t.Fatalf("write in the home: %+v", res)
	}
	if err := d.CopyTo(ctx, first.ID, sandbox.HomeDir+"/b.txt", []byte("file api"), 0o640); err != nil {
		t.Fatal(err)
	}
	if err := d.RemoveVolume(ctx, name); err == nil {
		t.Error("RemoveVolume of a volume in use: no error")
	}
	if err := d.Remove(ctx, first.ID); err != nil {
		t.Fatal(err)
	}

	second := create()
	res = mustExec(t, d, second.ID, sandbox.ExecRequest{Cmd: []string{"cat", "notes/a", "b.txt"}})
	if res.ExitCode != 0 || string(res.Stdout) != "kept\nfile api" {
		t.Fatalf("the new sandbox's home: %+v (%q)", res, res.Stdout)
	}
	if f, err := d.CopyFrom(ctx, second.ID, sandbox.HomeDir+"/notes/a"); err != nil || string(f.Content) != "kept\n" {
		t.Fatalf("CopyFrom the kept home: %q %v", f.Content, err)
	}
	if err := d.Remove(ctx, second.ID); err != nil {
		t.Fatal(err)
	}

	for range 2 { // idempotent
		if err := d.RemoveVolume(ctx, name); err != nil {
			t.Fatalf("RemoveVolume: %v", err)
		}
	}
	third := create()
	if _, err := d.CopyFrom(ctx, third.ID, sandbox.HomeDir+"/notes/a"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("after RemoveVolume the home still holds notes/a (err = %v)", err)
	}
	if err := d.Remove(ctx, third.ID); err != nil {
		t.Fatal(err)
	}

	if _, err := d.Create(ctx, sandbox.Spec{Image: opts.Image, HomeVolume: "../etc"}); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("bad volume name: err = %v, want ErrInvalid", err)
	}
	if err := d.RemoveVolume(ctx, "no/such"); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("RemoveVolume of a bad name: err = %v, want ErrInvalid", err)
	}
}

func parallel(t *testing.T, d sandbox.Driver, sb sandbox.Sandbox, opts Options) {
	ctx := context.Background()
	t.Run("exec", func(t *testing.T) {
		t.Parallel()
		res := mustExec(t, d, sb.ID, sandbox.ExecRequest{
			Cmd: []string{"sh", "-c", `echo out; echo err >&2; echo "$EXEC_VAR $SPEC_VAR $SHARED"; exit 3`},
			Env: map[string]string{"EXEC_VAR": "from-exec", "SHARED": "exec"},
		})
		if res.ExitCode != 3 || res.TimedOut || res.Truncated {
			t.Fatalf("result = %+v", res)
		}
		if got, want := string(res.Stdout), "out\nfrom-exec from-spec exec\n"; got != want {
			t.Errorf("stdout = %q, want %q", got, want)
		}
		if got := string(res.Stderr); got != "err\n" {
			t.Errorf("stderr = %q, want %q", got, "err\n")
		}
	})

	t.Run("stdin and working directory", func(t *testing.T) {
		t.Parallel()
		res := mustExec(t, d, sb.ID, sandbox.ExecRequest{
			Cmd:   []string{"sh", "-c", `cat; echo; pwd`},
			Stdin: strings.NewReader("from stdin"),
		})
		lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
		if res.ExitCode != 0 || len(lines) != 2 || lines[0] != "from stdin" || !strings.HasSuffix(lines[1], sandbox.HomeDir) {
			t.Fatalf("result = %+v (%q)", res, res.Stdout)
		}
		// Without Stdin the command reads end of input at once.
		res = mustExec(t, d, sb.ID, sandbox.ExecRequest{Cmd: []string{"cat"}, Timeout: 20 * time.Second})
		if res.ExitCode != 0 || res.TimedOut || len(res.Stdout) != 0 {
			t.Fatalf("cat without stdin = %+v", res)
		}
	})

	t.Run("output is capped", func(t *testing.T) {
		t.Parallel()
		res := mustExec(t, d, sb.ID, sandbox.ExecRequest{
			Cmd:       []string{"sh", "-c", `i=0; while [ $i -lt 3000 ]; do echo 0123456789; echo e >&2; i=$((i+1)); done; exit 7`},
			MaxOutput: 100,
		})
		if res.ExitCode != 7 || !res.Truncated || len(res.Stdout) != 100 || len(res.Stderr) != 100 {
			t.Fatalf("exit=%d truncated=%v stdout=%d stderr=%d", res.ExitCode, res.Truncated, len(res.Stdout), len(res.Stderr))
		}
	})

	t.Run("unknown command", func(t *testing.T) {
		t.Parallel()
		res := mustExec(t, d, sb.ID, sandbox.ExecRequest{Cmd: []string{"no-such-command-guilds"}})
		if res.ExitCode != 127 {
			t.Fatalf("exit = %d, want 127 (%q)", res.ExitCode, res.Stderr)
		}
	})

	t.Run("timeout kills the process group", func(t *testing.T) {
		t.Parallel()
		res := mustExec(t, d, sb.ID, sandbox.ExecRequest{
			Cmd:     []string{"sh", "-c", `sleep 300 & echo $! > timeout-child.pid; echo started; wait`},
			Timeout: 700 * time.Millisecond,
		})
		if !res.TimedOut || res.ExitCode != sandbox.ExitTimeout {
			t.Fatalf("result = %+v, want timed out with %d", res, sandbox.ExitTimeout)
		}
		if string(res.Stdout) != "started\n" {
			t.Errorf("stdout = %q: output before the timeout is kept", res.Stdout)
		}
		assertGone(t, d, sb.ID, sandbox.HomeDir+"/timeout-child.pid")
	})

	t.Run("timeout escalates to SIGKILL", func(t *testing.T) {
		t.Parallel()
		res := mustExec(t, d, sb.ID, sandbox.ExecRequest{
			Cmd:     []string{"sh", "-c", `trap "" TERM; echo $$ > stubborn.pid; while :; do sleep 1; done`},
			Timeout: 500 * time.Millisecond,
		})
		if !res.TimedOut || res.ExitCode != sandbox.ExitTimeout {
			t.Fatalf("result = %+v", res)
		}
		assertGone(t, d, sb.ID, sandbox.HomeDir+"/stubborn.pid")
	})

	t.Run("file round trip", func(t *testing.T) {
		t.Parallel()
		for _, f := range []struct {
			path    string
			content string
			mode    fs.FileMode
		}{
			{sandbox.RunDir + "/requests/r1.json", `{"a":1}`, 0o600},
			{sandbox.HomeDir + "/bin/tool.sh", "#!/bin/sh\necho tool-ran\n", 0o755},
			{sandbox.HomeDir + "/empty", "", 0o644},
		} {
			if err := d.CopyTo(ctx, sb.ID, f.path, []byte(f.content), f.mode); err != nil {
				t.Fatalf("copy to %s: %v", f.path, err)
			}
			got, err := d.CopyFrom(ctx, sb.ID, f.path)
			if err != nil {
				t.Fatalf("copy from %s: %v", f.path, err)
			}
			if string(got.Content) != f.content || got.Mode != f.mode {
				t.Errorf("%s = %q %v, want %q %v", f.path, got.Content, got.Mode, f.content, f.mode)
			}
		}
		// The written script is executable inside the sandbox.
		res := mustExec(t, d, sb.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "./bin/tool.sh"}})
		if res.ExitCode != 0 || string(res.Stdout) != "tool-ran\n" {
			t.Errorf("running the copied script = %+v", res)
		}
		// Overwrite replaces content and mode.
		p := sandbox.RunDir + "/requests/r1.json"
		if err := d.CopyTo(ctx, sb.ID, p, []byte("v2"), 0o640); err != nil {
			t.Fatal(err)
		}
		if got, _ := d.CopyFrom(ctx, sb.ID, p); string(got.Content) != "v2" || got.Mode != 0o640 {
			t.Errorf("after overwrite = %q %v", got.Content, got.Mode)
		}
		if _, err := d.CopyFrom(ctx, sb.ID, sandbox.HomeDir+"/missing"); !errors.Is(err, sandbox.ErrNotFound) {
			t.Errorf("missing file: err = %v, want ErrNotFound", err)
		}
		if _, err := d.CopyFrom(ctx, sb.ID, sandbox.HomeDir); !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("directory: err = %v, want ErrInvalid", err)
		}
		for _, bad := range []string{"relative", "/home/agent/../../etc/passwd", "/home//agent"} {
			if err := d.CopyTo(ctx, sb.ID, bad, nil, 0o600); !errors.Is(err, sandbox.ErrInvalid) {
				t.Errorf("CopyTo(%q): err = %v, want ErrInvalid", bad, err)
			}
		}
		if err := d.CopyTo(ctx, sb.ID, p, make([]byte, sandbox.MaxFileSize+1), 0o600); !errors.Is(err, sandbox.ErrTooLarge) {
			t.Errorf("oversized CopyTo: err = %v, want ErrTooLarge", err)
		}
	})

	t.Run("bad requests", func(t *testing.T) {
		t.Parallel()
		if _, err := d.Exec(ctx, sb.ID, sandbox.ExecRequest{}); !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("empty command: err = %v", err)
		}
		if _, err := d.Exec(ctx, "0123456789abcdef01234567", sandbox.ExecRequest{Cmd: []string{"true"}}); !errors.Is(err, sandbox.ErrNotFound) {
			t.Errorf("unknown sandbox: err = %v", err)
		}
		if _, err := d.Create(ctx, sandbox.Spec{Image: opts.Image, Labels: map[string]string{"guilds.managed": "false"}}); !errors.Is(err, sandbox.ErrInvalid) {
			t.Errorf("reserved label: err = %v", err)
		}
	})

	t.Run("labels, list, cleanup, remove", func(t *testing.T) {
		t.Parallel()
		for k, v := range map[string]string{sandbox.LabelManaged: "true", sandbox.LabelAgent: "agent-1", sandbox.LabelRun: "run-1", "team": "blue"} {
			if sb.Labels[k] != v {
				t.Errorf("label %s = %q, want %q", k, sb.Labels[k], v)
			}
		}
		if sb.AgentID != "agent-1" || sb.RunID != "run-1" || sb.Created.IsZero() {
			t.Errorf("sandbox = %+v", sb)
		}
		other, err := d.Create(ctx, sandbox.Spec{Image: opts.Image, AgentID: "agent-2", RunID: "run-2"})
		if err != nil {
			t.Fatal(err)
		}
		exists := func() bool { return true }
		if opts.Unmanaged != nil {
			exists = opts.Unmanaged(t)
		}
		list, err := d.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(list); len(got) != 2 || !slices.Contains(got, sb.ID) || !slices.Contains(got, other.ID) {
			t.Fatalf("list = %v, want exactly %s and %s", got, sb.ID, other.ID)
		}
		for _, s := range list {
			if s.ID == other.ID && (s.AgentID != "agent-2" || s.Labels[sandbox.LabelManaged] != "true") {
				t.Errorf("listed = %+v", s)
			}
		}
		if removed, err := d.Cleanup(ctx, time.Hour); err != nil || len(removed) != 0 {
			t.Fatalf("cleanup of older than an hour = %v, %v; want nothing", ids(removed), err)
		}
		// Remove is idempotent.
		for range 2 {
			if err := d.Remove(ctx, other.ID); err != nil {
				t.Fatalf("remove: %v", err)
			}
		}
		if err := d.Remove(ctx, "0123456789abcdef01234567"); err != nil {
			t.Fatalf("remove of an unknown id: %v", err)
		}
		if _, err := d.Exec(ctx, other.ID, sandbox.ExecRequest{Cmd: []string{"true"}}); !errors.Is(err, sandbox.ErrNotFound) {
			t.Errorf("exec after remove: err = %v", err)
		}
		if !exists() {
			t.Fatal("the unmanaged object vanished")
		}
	})
}

// cleanupAll checks Cleanup(0) once every subtest is done with sb.
func cleanupAll(t *testing.T, d sandbox.Driver, id string, opts Options) {
	t.Helper()
	t.Run("cleanup removes only managed sandboxes", func(t *testing.T) {
		ctx := context.Background()
		exists := func() bool { return true }
		if opts.Unmanaged != nil {
			exists = opts.Unmanaged(t)
		}
		removed, err := d.Cleanup(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := ids(removed); !slices.Contains(got, id) {
			t.Fatalf("cleanup removed %v, want it to include %s", got, id)
		}
		if list, _ := d.List(ctx); len(list) != 0 {
			t.Fatalf("after cleanup list = %v", ids(list))
		}
		if !exists() {
			t.Fatal("cleanup removed an object the platform did not create")
		}
	})
}

func ids(list []sandbox.Sandbox) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.ID
	}
	return out
}

func mustExec(t *testing.T, d sandbox.Driver, id string, req sandbox.ExecRequest) sandbox.ExecResult {
	t.Helper()
	res, err := d.Exec(context.Background(), id, req)
	if err != nil {
		t.Fatalf("exec %q: %v", req.Cmd, err)
	}
	return res
}

// assertGone reads a pid the command wrote and checks, from a fresh exec,
// that the process no longer exists (a zombie awaiting its reaper counts as
// gone; it is given a moment to be reaped).
func assertGone(t *testing.T, d sandbox.Driver, id, pidFile string) {
	t.Helper()
	f, err := d.CopyFrom(context.Background(), id, pidFile)
	if err != nil {
		t.Fatalf("pid file: %v", err)
	}
	pid := strings.TrimSpace(string(f.Content))
	script := fmt.Sprintf(`i=0; while [ -e /proc/%[1]s ] && ! grep -q '^[^)]*) Z' /proc/%[1]s/stat 2>/dev/null; do
  i=$((i+1)); [ $i -gt 30 ] && { echo "process %[1]s still running"; exit 1; }; sleep 0.1; done`, pid)
	res := mustExec(t, d, id, sandbox.ExecRequest{Cmd: []string{"sh", "-c", script}, Timeout: 20 * time.Second})
	if res.ExitCode != 0 {
		t.Fatalf("%s%s", res.Stdout, res.Stderr)
	}
}
