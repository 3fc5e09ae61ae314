package workspaces

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/guilds/guilds/sandbox/docker"
)

// startPool starts the pool of the "pool" world's driver for m and waits
// until size sandboxes are ready.
func startPool(tb testing.TB, m *Manager, w world, size int) {
	tb.Helper()
	if os.Geteuid() != 0 {
		tb.Skip("the sandbox pool attaches homes with mounts on the worker's host, which needs root")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := m.StartPool(ctx, size); err != nil {
		tb.Fatal(err)
	}
	waitPool(tb, w, size)
}

func waitPool(tb testing.TB, w world, size int) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if err := w.driver.(*docker.Driver).WaitPool(ctx, size); err != nil {
		tb.Fatal(err)
	}
}

// A new agent's first call takes a pooled sandbox, and the home it finds
// is the one a sandbox the engine creates would have given it (the
// image's home, owners and modes included).
func TestPoolGivesANewAgentTheImagesHome(t *testing.T) {
	t.Parallel()
	pw := openWorld(t, "pool")
	pm, pa := manager(t, pw, Options{})
	startPool(t, pm, pw, 1)
	const shape = `stat -c '%U:%G %a' /home/agent; ` + treeListing
	pooled := exec(t, pm, pa, shape)
	if got := pw.driver.(*docker.Driver).PoolReady(); got != 0 {
		t.Fatalf("the first call left %d sandboxes waiting, want its claim to have taken the one", got)
	}
	cw := openWorld(t, "channel")
	cm, ca := manager(t, cw, Options{})
	if engine := exec(t, cm, ca, shape); pooled != engine {
		t.Fatalf("a new home in a pooled sandbox:\n%s\nthe engine's new home:\n%s", pooled, engine)
	}
}
