package docker

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/volume"
	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/testlog"
	"github.com/guilds/guilds/sandbox"
)

// poolEngine is channelEngine with a pool folder; the pool is not started.
func poolEngine(t *testing.T) *Driver {
	t.Helper()
	d, _ := poolEngineLogged(t)
	return d
}

// poolEngineLogged is poolEngine with its log, Debug and up, as it is written.
func poolEngineLogged(t *testing.T) (*Driver, *testlog.Buffer) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the sandbox pool attaches homes with mounts on the worker's host, which needs root")
	}
	plain, _ := engine(t)
	poolDir := t.TempDir()
	logs := &testlog.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	d, err := New(Options{Client: plain.cli, Scope: plain.scope, ChannelDir: t.TempDir(), ChannelServer: testServer(t), PoolDir: poolDir, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.StopPool(context.Background()) })
	return d, logs
}

const poolTarget = "/opt/guilds-proxy"

func startPool(t *testing.T, d *Driver, size int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	err := d.StartPool(ctx, sandbox.Pool{Size: size, Template: sandbox.Spec{Image: testImage(), User: "1000:1000"}, BindTargets: []string{poolTarget}})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.WaitPool(ctx, size); err != nil {
		t.Fatal(err)
	}
}

func readyIDs(d *Driver) []string {
	p := d.pool.Load()
	p.mu.Lock()
	defer p.mu.Unlock()
	var ids []string
	for _, s := range p.ready {
		ids = append(ids, s.id)
	}
	return ids
}

func homeVolume(t *testing.T, d *Driver) string {
	t.Helper()
	name := "guilds-test-home-" + uuid.NewString()[:8]
	t.Cleanup(func() { _ = d.RemoveVolume(context.Background(), name) })
	return name
}

func sh(t *testing.T, d *Driver, id, script string) string {
	t.Helper()
	res, err := d.Exec(context.Background(), id, sandbox.ExecRequest{Cmd: []string{"/bin/sh", "-c", script}, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(res.Stdout)) + strings.TrimSpace(string(res.Stderr))
}

// A claimed sandbox is one the pool made before the agent was known; the
// agent's home and binds appear in it at the claim, writes land on the
// home volume, and nothing of one agent reaches another.
func TestPoolAttachesTheHomeAtClaim(t *testing.T) {
	d, logs := poolEngineLogged(t)
	ctx := context.Background()
	startPool(t, d, 2)
	logs.WaitFor(t, `msg="sandbox pool full"`, time.Minute)
	pooled := readyIDs(d)
	if got := d.PoolReady(); got != 2 {
		t.Fatalf("PoolReady = %d, want 2", got)
	}
	list, err := d.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sb := range list {
		if slices.Contains(pooled, sb.ID) {
			t.Fatalf("List shows the waiting pooled sandbox %s: a worker's clean-up would remove it", sb.ID)
		}
	}

	proxy := t.TempDir()
	if err := os.WriteFile(filepath.Join(proxy, "marker"), []byte("proxy of a"), 0o644); err != nil {
		t.Fatal(err)
	}
	volA := homeVolume(t, d)
	specA := sandbox.Spec{Image: testImage(), User: "1000:1000", AgentID: "a", HomeVolume: volA,
		Binds: []sandbox.Bind{{Source: proxy, Target: poolTarget, ReadOnly: true}}}
	a, err := d.Create(ctx, specA)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(pooled, a.ID) {
		t.Fatalf("agent a got %s, not one of the pooled sandboxes %v", a.ID, pooled)
	}
	if a.AgentID != "a" || a.Labels[sandbox.LabelAgent] != "a" {
		t.Fatalf("claimed sandbox = %+v, want agent a", a)
	}
	if out := sh(t, d, a.ID, "echo kept > /home/agent/f && cat /home/agent/f"); out != "kept" {
		t.Fatalf("writing the home: %q", out)
	}
	if out := sh(t, d, a.ID, "cat "+poolTarget+"/marker; touch "+poolTarget+"/x 2>/dev/null && echo writable"); out != "proxy of a" {
		t.Fatalf("the bind: %q, want its content and no write", out)
	}
	v, err := d.cli.VolumeInspect(ctx, volA)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(v.Mountpoint, "f")); err != nil || string(b) != "kept\n" {
		t.Fatalf("the home volume holds %q (%v), want what the agent wrote", b, err)
	}
	list, err = d.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if i := slices.IndexFunc(list, func(sb sandbox.Sandbox) bool { return sb.ID == a.ID }); i < 0 || list[i].AgentID != "a" {
		t.Fatalf("List does not show agent a's claimed sandbox: %+v", list)
	}
	if err := d.RemoveVolume(ctx, volA); err == nil {
		t.Fatal("RemoveVolume took the home of a running pooled sandbox")
	}

	// Another agent: the other pooled sandbox, a new home of its own, shaped
	// as the engine shapes a new home.
	b, err := d.Create(ctx, sandbox.Spec{Image: testImage(), User: "1000:1000", AgentID: "b", HomeVolume: homeVolume(t, d)})
	if err != nil {
		t.Fatal(err)
	}
	if b.ID == a.ID || !slices.Contains(pooled, b.ID) {
		t.Fatalf("agent b got %s (a has %s, pooled %v)", b.ID, a.ID, pooled)
	}
	const shape = "stat -c '%u %g %a' /home/agent; ls -A /home/agent"
	pooledHome := sh(t, d, b.ID, shape)
	c, err := d.Create(ctx, sandbox.Spec{Image: testImage(), User: "1000:1000", AgentID: "c", HomeVolume: homeVolume(t, d), Env: map[string]string{"NOT_POOLED": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Remove(ctx, c.ID) }()
	if slices.Contains(pooled, c.ID) {
		t.Fatal("a spec with an environment took a pooled sandbox")
	}
	if engineHome := sh(t, d, c.ID, shape); pooledHome != engineHome {
		t.Fatalf("a new home in a pooled sandbox is %q, the engine's new home is %q", pooledHome, engineHome)
	}

	// Removing a's sandbox takes its mounts off the host and keeps its home;
	// a later sandbox of a, made by the engine, finds it as it was.
	if err := d.Remove(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	points, err := mountsUnder(d.poolDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(points) != 2 { // the pool folder itself and b's home
		t.Fatalf("mounts under the pool folder after a's removal: %v", points)
	}
	specA.Env = map[string]string{"NOT_POOLED": "1"}
	again, err := d.Create(ctx, specA)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Remove(ctx, again.ID) }()
	if out := sh(t, d, again.ID, "cat /home/agent/f"); out != "kept" {
		t.Fatalf("a's home after its pooled sandbox went: %q", out)
	}
	if err := d.Remove(ctx, b.ID); err != nil {
		t.Fatal(err)
	}

	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	if err := d.WaitPool(wctx, 2); err != nil {
		t.Fatal("the pool did not fill again:", err)
	}
	// Full again after the claims is routine: said at Debug, not again at Info.
	logs.WaitFor(t, `msg="sandbox pool refilled"`, time.Minute)
	if n := logs.Count(`msg="sandbox pool full"`); n != 1 {
		t.Fatalf("%d lines say the pool is full, want the first fill's only", n)
	}
}

// A spec the engine refuses (a home volume that is not the platform's)
// fails as it would without a pool, and costs the pool no sandbox.
func TestPoolKeepsItsSandboxWhenTheEngineRefusesTheHome(t *testing.T) {
	d := poolEngine(t)
	ctx := context.Background()
	startPool(t, d, 1)
	name := "guilds-test-foreign-" + uuid.NewString()[:8]
	if _, err := d.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.cli.VolumeRemove(context.Background(), name, true) })
	_, err := d.Create(ctx, sandbox.Spec{Image: testImage(), User: "1000:1000", AgentID: "f", HomeVolume: name})
	if !errors.Is(err, sandbox.ErrInvalid) {
		t.Fatalf("Create on a foreign volume = %v, want ErrInvalid", err)
	}
	if got := d.PoolReady(); got != 1 {
		t.Fatalf("PoolReady = %d after a refused Create, want 1", got)
	}
}

// A driver whose engine is not known to be on the worker's host keeps no
// pool, and says why.
func TestPoolNeedsTheEnginesHost(t *testing.T) {
	d, _ := engine(t)
	err := d.StartPool(context.Background(), sandbox.Pool{Size: 1, Template: sandbox.Spec{Image: testImage()}})
	if !errors.Is(err, ErrPoolUnsupported) {
		t.Fatalf("StartPool without a channel or pool folder = %v, want ErrPoolUnsupported", err)
	}
	if d.PoolReady() != 0 {
		t.Fatal("a pool that did not start has sandboxes")
	}
}
