package workspaces

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/guilds/guilds/internal/workspaces/stopbus"
	"github.com/guilds/guilds/sandbox"
)

func homes(t *testing.T, d sandbox.Driver) []string {
	t.Helper()
	names, err := d.(sandbox.VolumeLister).ListVolumes(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// A stop order that reaches the worker over Redis ends the agent's sandbox
// (and its background commands); a removal deletes its home as well.
func TestStopOrdersEndTheSandboxAndRemoveTheHome(t *testing.T) {
	t.Parallel()
	for _, name := range worldNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			stopOrders(t, openWorld(t, name))
		})
	}
}

func stopOrders(t *testing.T, w world) {
	m, stopped := manager(t, w, Options{})
	removed := "agent-" + uuid.NewString()
	for _, a := range []string{stopped, removed} {
		exec(t, m, a, "echo kept > ~/note; (sleep 600 >/dev/null 2>&1 &)")
	}

	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379"})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	ready := make(chan struct{})
	applied := make(chan stopbus.Order, 10)
	go func() {
		_ = stopbus.Listen(ctx, rdb, slog.New(slog.DiscardHandler), ready, func(ctx context.Context, o stopbus.Order) {
			if err := m.Apply(ctx, o); err != nil {
				t.Errorf("apply %+v: %v", o, err)
			}
			applied <- o
		})
	}()
	<-ready
	for _, o := range []stopbus.Order{
		{Agents: []string{stopped}, Why: "test stop"},
		{Agents: []string{removed}, RemoveHome: true, Why: "test delete"},
	} {
		if err := stopbus.Publish(ctx, rdb, o); err != nil {
			t.Fatal(err)
		}
		for got := <-applied; !slices.Equal(got.Agents, o.Agents); got = <-applied {
		}
	}
	for _, a := range []string{stopped, removed} {
		if ids := agentSandboxes(t, w.driver, a); len(ids) != 0 {
			t.Fatalf("agent %s still has sandboxes %v", a, ids)
		}
	}
	if h := homes(t, w.driver); !slices.Contains(h, HomeVolume(stopped)) || slices.Contains(h, HomeVolume(removed)) {
		t.Fatalf("homes after the orders: %v", h)
	}
	if got := exec(t, m, stopped, "cat ~/note"); got != "kept\n" {
		t.Fatalf("a stopped agent's home: %q", got)
	}
}

// The reaper removes the homes (and held sandboxes) of agents that no
// longer exist, the ones whose delete order this worker missed.
func TestReapHomesRemovesTheHomesOfDeletedAgents(t *testing.T) {
	t.Parallel()
	for _, name := range worldNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			reapHomes(t, openWorld(t, name))
		})
	}
}

func reapHomes(t *testing.T, w world) {
	m, alive := manager(t, w, Options{})
	gone := "agent-" + uuid.NewString()
	for _, a := range []string{alive, gone} {
		exec(t, m, a, "echo x > ~/f")
	}
	reaped, err := m.ReapHomes(context.Background(), func(_ context.Context, ids []string) (map[string]bool, error) {
		return map[string]bool{alive: true}, nil
	})
	if err != nil || !slices.Equal(reaped, []string{gone}) {
		t.Fatalf("reaped %v, %v", reaped, err)
	}
	if h := homes(t, w.driver); !slices.Contains(h, HomeVolume(alive)) || slices.Contains(h, HomeVolume(gone)) {
		t.Fatalf("homes after the reaper: %v", h)
	}
	if ids := agentSandboxes(t, w.driver, gone); len(ids) != 0 {
		t.Fatalf("a deleted agent keeps sandboxes %v", ids)
	}
}
