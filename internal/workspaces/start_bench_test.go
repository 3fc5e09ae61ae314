package workspaces

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/sandboxtest"
)

// The start benchmarks time what an agent's tool call waits for when it
// needs the agent's workspace: from Manager.Exec to its first command
// (`true`) answering, on the docker driver (Podman here) with the agent
// image. ns/op is the mean of the timed calls; p50 and p99 come from each
// call's own time. See docs/bench/sandbox.md.

// BenchmarkStartCold: a new agent, no home volume, no sandbox.
func BenchmarkStartCold(b *testing.B) { benchCold(b, "docker") }

// The Channel variants run the same cases with the command channel on
// (ADR 0711): commands reach the sandbox's keeper on its socket, with no
// engine exec.
func BenchmarkStartColdChannel(b *testing.B)     { benchCold(b, "channel") }
func BenchmarkStartRecreateChannel(b *testing.B) { benchAfterOn(b, "channel", stopNow) }
func BenchmarkStartWarmChannel(b *testing.B)     { benchAfterOn(b, "channel", parkNow) }
func BenchmarkStartHotChannel(b *testing.B)      { benchAfterOn(b, "channel", nothing) }
func BenchmarkStartBurst20Channel(b *testing.B)  { benchBurst(b, "channel") }

// BenchmarkStartBurst20Pool: the burst with a pool of 20 sandboxes ready
// (ADR 0712); each round starts once the pool is full again.
func BenchmarkStartBurst20Pool(b *testing.B) { benchBurst(b, "pool") }

func stopNow(m *Manager, agent string) error { return m.Stop(context.Background(), agent) }
func parkNow(m *Manager, agent string) error { return m.park(agent) }
func nothing(*Manager, string) error         { return nil }

func benchCold(b *testing.B, world string) {
	w := openWorld(b, world)
	m := New(w.driver, Options{Image: w.image})
	b.Cleanup(func() { _ = m.Close(context.Background()) })
	var lat sandboxtest.Latencies
	b.ReportAllocs()
	for b.Loop() {
		agent := "agent-" + uuid.NewString()
		lat = append(lat, firstCall(b, m, agent))
		b.StopTimer()
		if err := m.RemoveHome(context.Background(), agent); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	lat.Report(b, "")
}

// BenchmarkStartRecreate: the agent's home is there, its sandbox removed
// (an explicit stop, or an idle stop on a driver that cannot park).
func BenchmarkStartRecreate(b *testing.B) { benchAfterOn(b, "docker", stopNow) }

// BenchmarkStartWarm: the agent's sandbox was parked by its idle stop.
func BenchmarkStartWarm(b *testing.B) { benchAfterOn(b, "docker", parkNow) }

// BenchmarkStartHot: the sandbox runs; the cost of the command alone.
func BenchmarkStartHot(b *testing.B) { benchAfterOn(b, "docker", nothing) }

func benchAfterOn(b *testing.B, world string, before func(m *Manager, agent string) error) {
	w := openWorld(b, world)
	m := New(w.driver, Options{Image: w.image})
	agent := "agent-" + uuid.NewString()
	b.Cleanup(func() {
		_ = m.RemoveHome(context.Background(), agent)
		_ = m.Close(context.Background())
	})
	firstCall(b, m, agent)
	var lat sandboxtest.Latencies
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		if err := before(m, agent); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		lat = append(lat, firstCall(b, m, agent))
	}
	lat.Report(b, "")
}

// BenchmarkStartBurst20: 20 new agents' first calls at once; p50 and p99
// over every call of every round, ns/op one whole round.
func BenchmarkStartBurst20(b *testing.B) { benchBurst(b, "docker") }

func benchBurst(b *testing.B, world string) {
	const burst = 20
	w := openWorld(b, world)
	m := New(w.driver, Options{Image: w.image})
	b.Cleanup(func() { _ = m.Close(context.Background()) })
	if world == "pool" {
		startPool(b, m, w, burst)
	}
	var lat sandboxtest.Latencies
	b.ReportAllocs()
	for b.Loop() {
		if world == "pool" {
			b.StopTimer()
			waitPool(b, w, burst)
			b.StartTimer()
		}
		agents := make([]string, burst)
		got := make([]time.Duration, burst)
		var wg sync.WaitGroup
		for i := range agents {
			agents[i] = "agent-" + uuid.NewString()
			wg.Go(func() { got[i] = firstCall(b, m, agents[i]) })
		}
		wg.Wait()
		lat = append(lat, got...)
		b.StopTimer()
		for _, a := range agents {
			if err := m.RemoveHome(context.Background(), a); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
	}
	lat.Report(b, "")
}

// firstCall times one call that needs the agent's workspace.
func firstCall(tb testing.TB, m *Manager, agent string) time.Duration {
	t0 := time.Now()
	res, err := m.Exec(context.Background(), agent, sandbox.ExecRequest{Cmd: []string{"true"}, Timeout: time.Minute})
	d := time.Since(t0)
	if err != nil || res.ExitCode != 0 {
		tb.Errorf("first call of %s: %v (exit %d: %s)", agent, err, res.ExitCode, res.Stderr)
	}
	return d
}

// park is the idle stop, now.
func (m *Manager) park(agent string) error {
	m.mu.Lock()
	s := m.spaces[agent]
	m.mu.Unlock()
	if s == nil {
		return nil
	}
	s.Lock()
	defer s.Unlock()
	return m.parkLocked(context.Background(), s)
}
