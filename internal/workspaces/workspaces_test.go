package workspaces

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/dockertest"
	"github.com/guilds/guilds/sandbox/local"
)

// The docker variants run on the engine at DOCKER_HOST (Podman in CI) with
// the image `make sandbox-image` builds; the local variants need nothing.

// world is one driver the lifecycle tests run against.
type world struct {
	name   string
	driver sandbox.Driver
	image  string
	// kill makes the sandbox die under the manager, as a crash would.
	kill func(t *testing.T, id string)
	// remove deletes it under the manager, as an engine restart might.
	remove func(t *testing.T, id string)
}

// worldNames are the drivers every lifecycle test runs on, each in a
// subtest of its own, so a missing engine skips only the docker one.
var worldNames = []string{"local", "docker", "channel"}

func openWorld(t testing.TB, name string) world {
	t.Helper()
	if name == "local" {
		ld, err := local.New(local.Options{AllowUnisolated: true, Root: t.TempDir(), Scope: "test-" + uuid.NewString()})
		if err != nil {
			t.Fatal(err)
		}
		remove := func(t *testing.T, id string) {
			if err := ld.Remove(context.Background(), id); err != nil {
				t.Fatal(err)
			}
		}
		return world{name: name, driver: ld, kill: remove, remove: remove}
	}
	dd, cli := dockertest.Driver(t)
	switch name {
	case "channel":
		dd, cli = dockertest.ChannelDriver(t)
	case "pool":
		dd, cli = dockertest.PoolDriver(t) // startPool starts it
	}
	return world{
		name: name, driver: dd, image: dockertest.AgentImage(t, cli),
		kill: func(t *testing.T, id string) {
			if err := cli.ContainerKill(context.Background(), id, "KILL"); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the killed container to stop", func() bool {
				info, err := cli.ContainerInspect(context.Background(), id)
				return err == nil && !info.State.Running
			})
		},
		remove: func(t *testing.T, id string) {
			if err := cli.ContainerRemove(context.Background(), id, container.RemoveOptions{Force: true}); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// manager returns a manager on w for a fresh agent, closed with the test
// (and the agent's home removed).
func manager(t *testing.T, w world, opts Options) (*Manager, string) {
	t.Helper()
	opts.Image = w.image
	m := New(w.driver, opts)
	agent := "agent-" + uuid.NewString()
	t.Cleanup(func() {
		ctx := context.Background()
		_ = m.Close(ctx)
		_ = w.driver.RemoveVolume(ctx, HomeVolume(agent))
	})
	return m, agent
}

func exec(t *testing.T, m *Manager, agent, script string) string {
	t.Helper()
	res, err := m.Exec(context.Background(), agent, sandbox.ExecRequest{Cmd: []string{"sh", "-c", script}, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("exec %q: exit %d: %s%s", script, res.ExitCode, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}

// waitFor polls cond; the bound is generous and is not what is tested.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for i := 0; !cond(); i++ {
		if i > 600 {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func agentSandboxes(t *testing.T, d sandbox.Driver, agent string) []string {
	t.Helper()
	list, err := d.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sb := range list {
		if sb.AgentID == agent {
			ids = append(ids, sb.ID)
		}
	}
	return ids
}

func TestFirstCallCreatesNextCallsReuse(t *testing.T) {
	t.Parallel()
	for _, name := range worldNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := openWorld(t, name)
			m, agent := manager(t, w, Options{})
			if id := m.SandboxID(agent); id != "" {
				t.Fatalf("a sandbox before any call: %s", id)
			}
			exec(t, m, agent, "echo one > turn1")
			first := m.SandboxID(agent)
			if first == "" {
				t.Fatal("no sandbox after the first call")
			}
			ctx := context.Background()
			if err := m.CopyTo(ctx, agent, sandbox.HomeDir+"/turn2", []byte("two\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := exec(t, m, agent, "cat turn1 turn2"); got != "one\ntwo\n" {
				t.Fatalf("got %q", got)
			}
			f, err := m.CopyFrom(ctx, agent, sandbox.HomeDir+"/turn1")
			if err != nil || string(f.Content) != "one\n" {
				t.Fatalf("CopyFrom = %q, %v", f.Content, err)
			}
			// A missing file is the caller's error, not a dead sandbox.
			if _, err := m.CopyFrom(ctx, agent, sandbox.HomeDir+"/missing"); !errors.Is(err, sandbox.ErrNotFound) {
				t.Fatalf("CopyFrom of a missing file: err = %v, want ErrNotFound", err)
			}
			if id := m.SandboxID(agent); id != first {
				t.Fatalf("sandbox changed from %s to %s", first, id)
			}
			if ids := agentSandboxes(t, w.driver, agent); !slices.Equal(ids, []string{first}) {
				t.Fatalf("agent sandboxes = %v, want only %s", ids, first)
			}
		})
	}
}

func TestIdleStopThenRecreateKeepsTheHome(t *testing.T) {
	t.Parallel()
	for _, name := range worldNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := openWorld(t, name)
			m, agent := manager(t, w, Options{Idle: 300 * time.Millisecond})
			// A sleep no other test runs: the local driver's ps sees the host's.
			sleep := fmt.Sprintf("sleep %d", 10000+rand.IntN(80000))
			exec(t, m, agent, "mkdir -p repos/p && echo kept > repos/p/file && echo t > \"${TMPDIR:-/tmp}/scratch\" && ("+sleep+" >/dev/null 2>&1 </dev/null &)")
			first := m.SandboxID(agent)
			waitFor(t, "the idle stop", func() bool { return m.SandboxID(agent) == "" })
			// A driver that parks (docker) keeps the frozen sandbox, and
			// only it; the others remove it.
			if ids := agentSandboxes(t, w.driver, agent); len(ids) > 1 || len(ids) == 1 && ids[0] != first {
				t.Fatalf("after the idle stop the driver has %v (first %s)", ids, first)
			}
			// The next call thaws or re-creates the sandbox on the same
			// home; the background command ended with the stop, and what
			// was outside the home is gone.
			if got := exec(t, m, agent, "cat repos/p/file; ps -eo args | grep -cx '"+sleep+"' || true; [ ! -e \"${TMPDIR:-/tmp}/scratch\" ] || echo scratch left"); got != "kept\n0\n" {
				t.Fatalf("after re-create: %q, want the file kept, no background sleep, no scratch file", got)
			}
			if second := m.SandboxID(agent); second == "" {
				t.Fatalf("no sandbox after re-create (first %s)", first)
			}
		})
	}
}

func TestACommandLongerThanTheIdleTimeIsNotStopped(t *testing.T) {
	t.Parallel()
	for _, name := range worldNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := openWorld(t, name)
			m, agent := manager(t, w, Options{Idle: 100 * time.Millisecond})
			exec(t, m, agent, "true")
			first := m.SandboxID(agent)
			if got := exec(t, m, agent, "sleep 1; echo done"); got != "done\n" {
				t.Fatalf("got %q", got)
			}
			if id := m.SandboxID(agent); id != first && id != "" {
				t.Fatalf("the sandbox was replaced during a call: %s then %s", first, id)
			}
		})
	}
}

func TestCrashedSandboxIsRecreated(t *testing.T) {
	t.Parallel()
	for _, name := range worldNames {
		for _, how := range []string{"killed", "removed"} {
			t.Run(name+"/"+how, func(t *testing.T) {
				t.Parallel()
				w := openWorld(t, name)
				m, agent := manager(t, w, Options{})
				exec(t, m, agent, "echo before > note")
				first := m.SandboxID(agent)
				if how == "killed" {
					w.kill(t, first)
				} else {
					w.remove(t, first)
				}
				if got := exec(t, m, agent, "cat note"); got != "before\n" {
					t.Fatalf("after the crash: %q", got)
				}
				second := m.SandboxID(agent)
				if second == "" || second == first {
					t.Fatalf("sandbox after the crash = %q (first %s)", second, first)
				}
				if ids := agentSandboxes(t, w.driver, agent); !slices.Equal(ids, []string{second}) {
					t.Fatalf("agent sandboxes = %v, want only %s (the dead one removed)", ids, second)
				}
				// The file API re-creates too.
				w.remove(t, second)
				if err := m.CopyTo(context.Background(), agent, sandbox.RunDir+"/requests/r", []byte("x"), 0o600); err != nil {
					t.Fatalf("CopyTo after a removal: %v", err)
				}
			})
		}
	}
}

func TestConcurrentFirstCallsMakeOneSandbox(t *testing.T) {
	t.Parallel()
	for _, name := range worldNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := openWorld(t, name)
			m, agent := manager(t, w, Options{})
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for i := range 8 {
				wg.Go(func() {
					res, err := m.Exec(context.Background(), agent, sandbox.ExecRequest{Cmd: []string{"sh", "-c", fmt.Sprintf("echo %d > c%d", i, i)}})
					if err == nil && res.ExitCode != 0 {
						err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
					}
					errs <- err
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Fatal(err)
				}
			}
			if ids := agentSandboxes(t, w.driver, agent); len(ids) != 1 || ids[0] != m.SandboxID(agent) {
				t.Fatalf("agent sandboxes = %v, want one (%s)", ids, m.SandboxID(agent))
			}
			if got := exec(t, m, agent, "cat c0 c1 c2 c3 c4 c5 c6 c7 | wc -l"); strings.TrimSpace(got) != "8" {
				t.Fatalf("files = %q", got)
			}
		})
	}
}

func TestCleanupOrphansKeepsWhatTheManagerHolds(t *testing.T) {
	t.Parallel()
	for _, name := range worldNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := openWorld(t, name)
			ctx := context.Background()
			// A sandbox left by an earlier worker.
			orphan, err := w.driver.Create(ctx, sandbox.Spec{Image: w.image, AgentID: "agent-earlier"})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = w.driver.Remove(context.Background(), orphan.ID) })
			m, agent := manager(t, w, Options{})
			exec(t, m, agent, "true")
			held := m.SandboxID(agent)

			removed, err := m.CleanupOrphans(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, sb := range removed {
				ids = append(ids, sb.ID)
			}
			if !slices.Contains(ids, orphan.ID) || slices.Contains(ids, held) {
				t.Fatalf("removed %v; want the orphan %s and not the held %s", ids, orphan.ID, held)
			}
			if _, err := w.driver.Exec(ctx, orphan.ID, sandbox.ExecRequest{Cmd: []string{"true"}}); !errors.Is(err, sandbox.ErrNotFound) {
				t.Fatalf("the orphan is still there: %v", err)
			}
			exec(t, m, agent, "true")
			if id := m.SandboxID(agent); id != held {
				t.Fatalf("the held sandbox was replaced: %s then %s", held, id)
			}
		})
	}
}

func TestStopCloseAndRemoveHome(t *testing.T) {
	t.Parallel()
	for _, name := range worldNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := openWorld(t, name)
			ctx := context.Background()
			m, agent := manager(t, w, Options{})
			exec(t, m, agent, "echo x > f")
			if err := m.Stop(ctx, agent); err != nil {
				t.Fatal(err)
			}
			if m.SandboxID(agent) != "" || len(agentSandboxes(t, w.driver, agent)) != 0 {
				t.Fatal("Stop left the sandbox")
			}
			if got := exec(t, m, agent, "cat f"); got != "x\n" {
				t.Fatalf("after Stop the home holds %q", got)
			}
			if err := m.RemoveHome(ctx, agent); err != nil {
				t.Fatal(err)
			}
			if got := exec(t, m, agent, "ls -A | grep -cx f || true"); got != "0\n" {
				t.Fatalf("after RemoveHome: %q", got)
			}
			if err := m.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if len(agentSandboxes(t, w.driver, agent)) != 0 {
				t.Fatal("Close left the sandbox")
			}
			if _, err := m.Exec(ctx, agent, sandbox.ExecRequest{Cmd: []string{"true"}}); !errors.Is(err, ErrClosed) {
				t.Fatalf("exec after Close: err = %v", err)
			}
		})
	}
}

func TestBadAgentID(t *testing.T) {
	t.Parallel()
	d, err := local.New(local.Options{AllowUnisolated: true, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	m := New(d, Options{})
	defer func() { _ = m.Close(context.Background()) }()
	for _, bad := range []string{"", "../x", "a b", strings.Repeat("a", 200)} {
		_, err := m.Exec(context.Background(), bad, sandbox.ExecRequest{Cmd: []string{"true"}})
		if !errors.Is(err, sandbox.ErrInvalid) || !strings.Contains(err.Error(), "agentID") {
			t.Errorf("agent %q: err = %v, want ErrInvalid naming agentID", bad, err)
		}
	}
}

func TestLocalModeTellsTheHelperWhereHomeIs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cfg := config.Config{DataDir: root, Sandbox: config.Sandbox{Driver: config.SandboxLocal, AllowLocal: true, Idle: time.Minute, Scope: "test-" + uuid.NewString()}}
	m, err := FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close(context.Background()) }()
	agent := "agent-" + uuid.NewString()
	got := exec(t, m, agent, `echo "$`+codeproto.HomeEnv+`"; pwd`)
	home := filepath.Join(root, "sandboxes", "volumes", HomeVolume(agent))
	if got != home+"\n"+home+"\n" {
		t.Fatalf("helper home and working directory = %q, want %s", got, home)
	}
	// A caller's own value does not replace it.
	res, err := m.Exec(context.Background(), agent, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo $X"}, Env: map[string]string{"X": "y"}})
	if err != nil || string(res.Stdout) != "y\n" {
		t.Fatalf("caller env: %q %v", res.Stdout, err)
	}
}

func TestFromConfig(t *testing.T) {
	t.Parallel()
	cfg := config.Config{DataDir: t.TempDir(), Sandbox: config.Sandbox{Driver: config.SandboxLocal, Idle: time.Minute}}
	if _, err := FromConfig(cfg, nil); err == nil || !strings.Contains(err.Error(), "GUILDS_SANDBOX_ALLOW_LOCAL") {
		t.Errorf("local without consent: err = %v", err)
	}
	cfg.Sandbox.Driver = "kvm"
	if _, err := FromConfig(cfg, nil); err == nil || !strings.Contains(err.Error(), "GUILDS_SANDBOX_DRIVER") {
		t.Errorf("unknown driver: err = %v", err)
	}
	cfg.Sandbox = config.Sandbox{Driver: config.SandboxDocker, Image: "img:1", Idle: time.Minute, Scope: "s"}
	m, err := FromConfig(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.opts.Image != "img:1" || m.opts.Idle != time.Minute || m.opts.User != DefaultUser {
		t.Errorf("options = %+v", m.opts)
	}
	_ = m.Close(context.Background())
}

// TestSandboxImage checks the image `make sandbox-image` builds, through
// the manager as the tools use it.
func TestSandboxImage(t *testing.T) {
	t.Parallel()
	d, cli := dockertest.Driver(t)
	w := world{name: "docker", driver: d, image: dockertest.AgentImage(t, cli)}
	img, err := cli.ImageInspect(context.Background(), w.image)
	if err != nil {
		t.Fatal(err)
	}
	if img.Config == nil || img.Config.User != "agent" || !slices.Contains(img.Config.Env, "HOME=/home/agent") || img.Config.WorkingDir != "/home/agent" {
		t.Errorf("image config = %+v; want user agent, HOME and working directory /home/agent", img.Config)
	}
	m, agent := manager(t, w, Options{})
	got := exec(t, m, agent, `set -e
id -un; echo "$HOME"; pwd
stat -c '%U' /home/agent
ls /sys/class/net
bash --version | head -1 | cut -d' ' -f1-3
git --version | cut -d' ' -f1-2
rg --version | head -1 | cut -d' ' -f1
ast-grep --version | cut -d' ' -f1
sg --version | cut -d' ' -f1
python3 -c 'print("python3 ok")'
ps -p 1 -o pid= | tr -d ' '
touch /home/agent/writable && echo home writable`)
	want := "agent\n/home/agent\n/home/agent\nagent\nlo\nGNU bash, version\ngit version\nripgrep\nast-grep\nast-grep\npython3 ok\n1\nhome writable\n"
	if got != want {
		t.Fatalf("inside the image:\n%s\nwant:\n%s", got, want)
	}
	// The helper is in the image once its source exists in the tree.
	_, file, _, _ := runtime.Caller(0)
	if _, err := os.Stat(filepath.Join(filepath.Dir(file), "..", "..", "cmd", "guilds-code")); err == nil {
		if got := exec(t, m, agent, "test -x "+codeproto.HelperPath+" && echo present"); got != "present\n" {
			t.Fatalf("helper: %q", got)
		}
	}
}

// BenchmarkManagerExec is one short command through the manager on a warm
// sandbox: the driver's exec plus the manager's bookkeeping.
func BenchmarkManagerExec(b *testing.B) {
	d, cli := dockertest.Driver(b)
	m := New(d, Options{Image: dockertest.AgentImage(b, cli)})
	agent := "agent-" + uuid.NewString()
	ctx := context.Background()
	b.Cleanup(func() { _ = m.Close(ctx); _ = d.RemoveVolume(ctx, HomeVolume(agent)) })
	req := sandbox.ExecRequest{Cmd: []string{"echo", "hi"}}
	if _, err := m.Exec(ctx, agent, req); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if res, err := m.Exec(ctx, agent, req); err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
	}
}

func TestBindsAreMountedInEveryNewSandbox(t *testing.T) {
	t.Parallel()
	d, cli := dockertest.Driver(t)
	w := world{name: "docker", driver: d, image: dockertest.AgentImage(t, cli)}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var asked []string
	m, agent := manager(t, w, Options{Binds: func(agentID string) ([]sandbox.Bind, error) {
		asked = append(asked, agentID)
		if err := os.WriteFile(filepath.Join(dir, "who"), []byte(agentID), 0o644); err != nil {
			return nil, err
		}
		return []sandbox.Bind{{Source: dir, Target: "/run/guilds-proxy", ReadOnly: true}}, nil
	}})
	if got := exec(t, m, agent, "cat /run/guilds-proxy/who"); got != agent {
		t.Fatalf("the bind shows %q", got)
	}
	if err := m.Stop(context.Background(), agent); err != nil {
		t.Fatal(err)
	}
	if got := exec(t, m, agent, "cat /run/guilds-proxy/who"); got != agent || len(asked) != 2 {
		t.Fatalf("after a re-creation the bind shows %q (asked %v)", got, asked)
	}
}
