package docker

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/google/uuid"

	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/sandboxtest"
)

// The tests run against the engine at DOCKER_HOST (Podman's service in CI,
// see scripts/podman-up.sh) and never start one themselves.

const setupHint = "run scripts/podman-up.sh and export DOCKER_HOST=unix:///tmp/podman.sock"

func testImage() string {
	if img := os.Getenv("SANDBOX_TEST_IMAGE"); img != "" {
		return img
	}
	return "guilds-sandbox-test:latest"
}

// engine returns a driver with a scope of its own, or skips (fails in CI)
// when no engine answers.
func engine(t testing.TB) (*Driver, *client.Client) {
	t.Helper()
	unavailable := func(format string, args ...any) {
		t.Helper()
		msg := "sandbox/docker: " + strings.TrimSpace(strings.ReplaceAll(
			fmt.Sprintf(format, args...), "\n", " ")) + "; " + setupHint
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	if os.Getenv("DOCKER_HOST") == "" {
		unavailable("DOCKER_HOST is not set")
	}
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		unavailable("client: %v", err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		unavailable("no engine answers at %s: %v", os.Getenv("DOCKER_HOST"), err)
	}
	if _, err := cli.ImageInspect(ctx, testImage()); err != nil {
		unavailable("test image %s: %v", testImage(), err)
	}
	d, err := New(Options{Client: cli, Scope: "test-" + uuid.NewString()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = d.Cleanup(context.Background(), 0) })
	return d, cli
}

// unmanaged starts a container the platform did not create.
func unmanaged(t *testing.T, cli *client.Client) func() bool {
	t.Helper()
	ctx := context.Background()
	c, err := cli.ContainerCreate(ctx, &container.Config{
		Image: testImage(), Entrypoint: keeper, Labels: map[string]string{"purpose": "guilds-sandbox-test"},
	}, &container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.ContainerRemove(context.Background(), c.ID, container.RemoveOptions{Force: true}) })
	if err := cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		t.Fatal(err)
	}
	return func() bool {
		_, err := cli.ContainerInspect(ctx, c.ID)
		return err == nil
	}
}

func TestContract(t *testing.T) {
	t.Parallel()
	d, cli := engine(t)
	sandboxtest.Run(t, d, sandboxtest.Options{
		Image:     testImage(),
		Unmanaged: func(t *testing.T) func() bool { return unmanaged(t, cli) },
	})
}

func TestSecureDefaults(t *testing.T) {
	t.Parallel()
	d, cli := engine(t)
	ctx := context.Background()
	sb, err := d.Create(ctx, sandbox.Spec{Image: testImage(), AgentID: "a", RunID: "r", Memory: 96 << 20, CPUs: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Remove(ctx, sb.ID) }()

	info, err := cli.ContainerInspect(ctx, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	h := info.HostConfig
	if !slices.ContainsFunc(h.SecurityOpt, func(s string) bool { return strings.HasPrefix(s, "no-new-privileges") }) {
		t.Errorf("SecurityOpt = %v, want no-new-privileges", h.SecurityOpt)
	}
	// Docker reports the request ("ALL"); Podman reports it expanded to
	// the capabilities it would otherwise grant. The bounding set read
	// from inside below is the proof either way.
	dropsAll := slices.Contains(h.CapDrop, "ALL") || slices.Contains(h.CapDrop, "CHOWN") && slices.Contains(h.CapDrop, "NET_RAW")
	if len(h.CapAdd) != 0 || !dropsAll {
		t.Errorf("CapAdd = %v, CapDrop = %v, want every capability dropped", h.CapAdd, h.CapDrop)
	}
	if !h.ReadonlyRootfs || h.NetworkMode != "none" {
		t.Errorf("ReadonlyRootfs = %v, NetworkMode = %q", h.ReadonlyRootfs, h.NetworkMode)
	}
	if h.Memory != 96<<20 || h.NanoCPUs != 5e8 || h.PidsLimit == nil || *h.PidsLimit != sandbox.DefaultPidsLimit {
		t.Errorf("Memory = %d, NanoCPUs = %d, PidsLimit = %v", h.Memory, h.NanoCPUs, h.PidsLimit)
	}
	for k, v := range map[string]string{sandbox.LabelManaged: "true", sandbox.LabelAgent: "a", sandbox.LabelRun: "r", sandbox.LabelScope: d.scope} {
		if info.Config.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, info.Config.Labels[k], v)
		}
	}

	// And from inside: no privileges to gain, no capabilities, loopback
	// only, nothing writable but the tmpfs mounts.
	res, err := d.Exec(ctx, sb.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", `
grep -E '^(NoNewPrivs|CapEff|CapBnd):' /proc/self/status
echo net: $(ls /sys/class/net)
touch /etc/x 2>/dev/null && echo rootfs: writable || echo rootfs: read-only
for d in /home/agent /run/guilds /tmp; do touch $d/x && echo $d: writable; done`}})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout)
	for _, want := range []string{
		"NoNewPrivs:\t1", "CapEff:\t0000000000000000", "CapBnd:\t0000000000000000",
		"net: lo\n", "rootfs: read-only", "/home/agent: writable", "/run/guilds: writable", "/tmp: writable",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("inside the sandbox: missing %q in\n%s%s", want, out, res.Stderr)
		}
	}
}

func TestNetworkOnRequest(t *testing.T) {
	t.Parallel()
	d, _ := engine(t)
	ctx := context.Background()
	sb, err := d.Create(ctx, sandbox.Spec{Image: testImage(), Network: true})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Remove(ctx, sb.ID) }()
	res, err := d.Exec(ctx, sb.ID, sandbox.ExecRequest{Cmd: []string{"ls", "/sys/class/net"}})
	if err != nil {
		t.Fatal(err)
	}
	if ifaces := strings.Fields(string(res.Stdout)); len(ifaces) < 2 {
		t.Fatalf("interfaces = %v, want more than loopback", ifaces)
	}
}

func TestUnprivilegedUserWritesTheMounts(t *testing.T) {
	t.Parallel()
	d, _ := engine(t)
	ctx := context.Background()
	sb, err := d.Create(ctx, sandbox.Spec{Image: testImage(), User: "1000:1000"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Remove(ctx, sb.ID) }()
	if err := d.CopyTo(ctx, sb.ID, sandbox.RunDir+"/git-tokens.json", []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := d.Exec(ctx, sb.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "id -u; touch /home/agent/f /tmp/f; stat -c '%u %a' /home/agent/f /run/guilds/git-tokens.json"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Stdout), "1000\n1000 644\n1000 600\n"; got != want {
		t.Fatalf("got %q (%s), want %q", got, res.Stderr, want)
	}
}

func TestCancelledContextKillsTheCommand(t *testing.T) {
	t.Parallel()
	d, _ := engine(t)
	ctx := context.Background()
	sb, err := d.Create(ctx, sandbox.Spec{Image: testImage()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Remove(ctx, sb.ID) }()
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := d.Exec(cctx, sb.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo $$ > cancel.pid; exec sleep 300"}})
		errc <- err
	}()
	// Cancel once the command is known to be running.
	for i := 0; ; i++ {
		if _, err := d.CopyFrom(ctx, sb.ID, sandbox.HomeDir+"/cancel.pid"); err == nil {
			break
		} else if i > 100 {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	res, err := d.Exec(ctx, sb.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", `p=$(cat cancel.pid); i=0
while [ -e /proc/$p ] && ! grep -q '^[^)]*) Z' /proc/$p/stat; do i=$((i+1)); [ $i -gt 30 ] && exit 1; sleep 0.1; done`}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("the cancelled command is still running: %+v %v", res, err)
	}
}

// BenchmarkExec measures one short command: exec create, attach, stream and
// inspect against the engine.
func BenchmarkExec(b *testing.B) {
	d, _ := engine(b)
	ctx := context.Background()
	sb, err := d.Create(ctx, sandbox.Spec{Image: testImage()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = d.Remove(ctx, sb.ID) }()
	req := sandbox.ExecRequest{Cmd: []string{"echo", "hi"}}
	b.ReportAllocs()
	for b.Loop() {
		if res, err := d.Exec(ctx, sb.ID, req); err != nil || res.ExitCode != 0 {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkCopyToFrom measures a 4 KiB write and read back through the file API.
func BenchmarkCopyToFrom(b *testing.B) {
	d, _ := engine(b)
	ctx := context.Background()
	sb, err := d.Create(ctx, sandbox.Spec{Image: testImage()})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = d.Remove(ctx, sb.ID) }()
	content := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		if err := d.CopyTo(ctx, sb.ID, sandbox.RunDir+"/requests/r.json", content, 0o600); err != nil {
			b.Fatal(err)
		}
		if _, err := d.CopyFrom(ctx, sb.ID, sandbox.RunDir+"/requests/r.json"); err != nil {
			b.Fatal(err)
		}
	}
}

func TestHomeVolumeLabelsAndOwnership(t *testing.T) {
	t.Parallel()
	d, cli := engine(t)
	ctx := context.Background()
	name := "guilds-test-home-" + uuid.NewString()
	t.Cleanup(func() { _ = cli.VolumeRemove(context.Background(), name, true) })
	sb, err := d.Create(ctx, sandbox.Spec{Image: testImage(), AgentID: "a", RunID: "r", HomeVolume: name, User: "1000:1000"})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Remove(ctx, sb.ID) }()
	v, err := cli.VolumeInspect(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{sandbox.LabelManaged: "true", sandbox.LabelAgent: "a", sandbox.LabelScope: d.scope} {
		if v.Labels[k] != want {
			t.Errorf("volume label %s = %q, want %q", k, v.Labels[k], want)
		}
	}
	if _, ok := v.Labels[sandbox.LabelRun]; ok {
		t.Error("a home volume carries a run label; it belongs to the agent")
	}
	info, err := cli.ContainerInspect(ctx, sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	onVolume := slices.ContainsFunc(info.Mounts, func(m container.MountPoint) bool {
		return m.Type == "volume" && m.Name == name && m.Destination == sandbox.HomeDir
	})
	if _, tmpfs := info.HostConfig.Tmpfs[sandbox.HomeDir]; tmpfs || !onVolume {
		t.Errorf("tmpfs = %v, mounts = %+v; want the home on volume %s", info.HostConfig.Tmpfs, info.Mounts, name)
	}
	res, err := d.Exec(ctx, sb.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "touch /home/agent/f && stat -c %u /home/agent/f"}})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "1000" {
		t.Fatalf("the sandbox user writes its home volume: %+v %v", res, err)
	}
}

func TestForeignVolumeRefused(t *testing.T) {
	t.Parallel()
	d, cli := engine(t)
	ctx := context.Background()
	name := "guilds-test-foreign-" + uuid.NewString()
	if _, err := cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Labels: map[string]string{"purpose": "guilds-sandbox-test"}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.VolumeRemove(context.Background(), name, true) })
	if _, err := d.Create(ctx, sandbox.Spec{Image: testImage(), HomeVolume: name}); !errors.Is(err, sandbox.ErrInvalid) {
		t.Fatalf("create on a volume the platform did not make: err = %v, want ErrInvalid", err)
	}
	if err := d.RemoveVolume(ctx, name); err != nil {
		t.Fatal(err)
	}
	if _, err := cli.VolumeInspect(ctx, name); err != nil {
		t.Fatalf("RemoveVolume removed a foreign volume: %v", err)
	}
}

func TestExecOnStoppedSandbox(t *testing.T) {
	t.Parallel()
	d, cli := engine(t)
	ctx := context.Background()
	sb, err := d.Create(ctx, sandbox.Spec{Image: testImage()})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Remove(ctx, sb.ID) }()
	timeout := 0
	if err := cli.ContainerStop(ctx, sb.ID, container.StopOptions{Timeout: &timeout}); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Exec(ctx, sb.ID, sandbox.ExecRequest{Cmd: []string{"true"}}); !errors.Is(err, sandbox.ErrNotRunning) {
		t.Fatalf("exec on a stopped sandbox: err = %v, want ErrNotRunning", err)
	}
}

func TestBindMountsAHostFolderReadOnly(t *testing.T) {
	t.Parallel()
	d, _ := engine(t)
	ctx := context.Background()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dir+"/hello", []byte("from the host\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", dir+"/s.sock")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	sb, err := d.Create(ctx, sandbox.Spec{Image: testImage(), User: "1000:1000",
		Binds: []sandbox.Bind{{Source: dir, Target: "/run/guilds-proxy", ReadOnly: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Remove(ctx, sb.ID) }()
	res, err := d.Exec(ctx, sb.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c",
		"cat /run/guilds-proxy/hello; test -S /run/guilds-proxy/s.sock && echo socket; touch /run/guilds-proxy/new 2>/dev/null || echo read-only"}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(res.Stdout), "from the host\nsocket\nread-only\n"; got != want {
		t.Fatalf("got %q (%s), want %q", got, res.Stderr, want)
	}
}
