package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/sandboxtest"
)

func TestContract(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	d, err := New(Options{AllowUnisolated: true, Root: root, Scope: "local-test"})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.Run(t, d, sandboxtest.Options{
		Unmanaged: func(t *testing.T) func() bool {
			// A directory shaped like a sandbox but without its metadata,
			// and a sandbox of another scope sharing the root.
			stray := filepath.Join(root, "00000000000000000000abcd")
			if err := os.MkdirAll(filepath.Join(stray, "fs"), 0o700); err != nil {
				t.Fatal(err)
			}
			other, err := New(Options{AllowUnisolated: true, Root: root, Scope: "someone-else"})
			if err != nil {
				t.Fatal(err)
			}
			sb, err := other.Create(context.Background(), sandbox.Spec{})
			if err != nil {
				t.Fatal(err)
			}
			return func() bool {
				_, err1 := os.Stat(stray)
				_, err2 := os.Stat(filepath.Join(root, sb.ID, metaFile))
				return err1 == nil && err2 == nil
			}
		},
	})
}

func TestRefusedUnlessEnabled(t *testing.T) {
	t.Parallel()
	if _, err := New(Options{Root: t.TempDir()}); !errors.Is(err, ErrDisabled) {
		t.Fatalf("err = %v, want ErrDisabled", err)
	}
}

func TestEnvironmentIsTheSandboxsOwn(t *testing.T) {
	t.Setenv("GUILDS_TEST_ORCHESTRATOR_SECRET", "must-not-leak")
	d, err := New(Options{AllowUnisolated: true, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sb, err := d.Create(ctx, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Exec(ctx, sb.ID, sandbox.ExecRequest{Cmd: []string{"env"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	if s := string(res.Stdout); len(s) == 0 || strings.Contains(s, "must-not-leak") {
		t.Fatalf("environment = %q", s)
	}
}

func TestCleanupAge(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	d, err := New(Options{AllowUnisolated: true, Root: t.TempDir(), now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	old, _ := d.Create(ctx, sandbox.Spec{})
	now = now.Add(2 * time.Hour)
	fresh, _ := d.Create(ctx, sandbox.Spec{})
	removed, err := d.Cleanup(ctx, time.Hour)
	if err != nil || len(removed) != 1 || removed[0].ID != old.ID {
		t.Fatalf("removed %+v, %v; want only %s", removed, err, old.ID)
	}
	if list, _ := d.List(ctx); len(list) != 1 || list[0].ID != fresh.ID {
		t.Fatalf("left %+v", list)
	}
}

func BenchmarkExec(b *testing.B) {
	d, err := New(Options{AllowUnisolated: true, Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sb, err := d.Create(ctx, sandbox.Spec{})
	if err != nil {
		b.Fatal(err)
	}
	req := sandbox.ExecRequest{Cmd: []string{"echo", "hi"}}
	b.ReportAllocs()
	for b.Loop() {
		if res, err := d.Exec(ctx, sb.ID, req); err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
	}
}

func TestHostPathFollowsTheHomeVolume(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	d, err := New(Options{AllowUnisolated: true, Root: root})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	plain, err := d.Create(ctx, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	withHome, err := d.Create(ctx, sandbox.Spec{HomeVolume: "home-1"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ id, p, want string }{
		{plain.ID, sandbox.HomeDir, filepath.Join(root, plain.ID, "fs", "home", "agent")},
		{withHome.ID, sandbox.HomeDir, filepath.Join(root, "volumes", "home-1")},
		{withHome.ID, sandbox.HomeDir + "/repos/x", filepath.Join(root, "volumes", "home-1", "repos", "x")},
		{withHome.ID, sandbox.RunDir, filepath.Join(root, withHome.ID, "fs", "run", "guilds")},
	} {
		got, err := d.HostPath(c.id, c.p)
		if err != nil || got != c.want {
			t.Errorf("HostPath(%s) = %q, %v; want %q", c.p, got, err, c.want)
		}
	}
	// The command's home and working directory are the volume.
	res, err := d.Exec(ctx, withHome.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", `echo "$HOME"; pwd`}})
	want := filepath.Join(root, "volumes", "home-1")
	if err != nil || string(res.Stdout) != want+"\n"+want+"\n" {
		t.Fatalf("exec = %q %v, want home and cwd %s", res.Stdout, err, want)
	}
	if _, err := d.HostPath("0123456789abcdef01234567", sandbox.HomeDir); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("unknown sandbox: err = %v", err)
	}
	if _, err := d.HostPath(plain.ID, "home/agent"); !errors.Is(err, sandbox.ErrInvalid) {
		t.Errorf("relative path: err = %v", err)
	}
}

func TestRemoveEndsBackgroundCommands(t *testing.T) {
	t.Parallel()
	d, err := New(Options{AllowUnisolated: true, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sb, err := d.Create(ctx, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := d.Exec(ctx, sb.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", `setsid sleep 300 >/dev/null 2>&1 </dev/null & echo $!`}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%+v %v", res, err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(res.Stdout)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if err := d.Remove(ctx, sb.ID); err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(raw), ") Z ") {
			return // gone, or a zombie awaiting its reaper
		}
		if i > 100 {
			t.Fatalf("background process %d survived Remove", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The local driver cannot run a command as another user: it says so rather
// than running it as its own.
func TestExecAsAnotherUserIsRefused(t *testing.T) {
	d, err := New(Options{AllowUnisolated: true, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sb, err := d.Create(ctx, sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(ctx, sb.ID, sandbox.ExecRequest{Cmd: []string{"true"}, User: sandbox.BrowserUser}); !errors.Is(err, sandbox.ErrInvalid) ||
		!strings.Contains(err.Error(), "local driver") {
		t.Fatalf("err = %v", err)
	}
}
