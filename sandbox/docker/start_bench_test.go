package docker

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/google/uuid"

	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/sandboxtest"
)

// BenchmarkStartSteps takes a sandbox's start apart into the engine calls
// Create makes, then parks and unparks it, each step timed on its own:
// where the first call of an agent spends its time. ns/op is one whole
// round (all the steps and the removal).
func BenchmarkStartSteps(b *testing.B) {
	d, _ := engine(b)
	benchSteps(b, d)
}

// BenchmarkStartStepsChannel is the same with the command channel (ADR
// 0711); "channel-" is the wait for the server's socket after the mounts.
func BenchmarkStartStepsChannel(b *testing.B) {
	benchSteps(b, channelEngine(b))
}

func benchSteps(b *testing.B, d *Driver) {
	ctx := context.Background()
	steps := []string{"volume-", "create-", "start-", "mounts-", "channel-", "inspect-", "exec-", "park-", "unpark-", "execafter-"}
	lat := make([]sandboxtest.Latencies, len(steps))
	b.ReportAllocs()
	for b.Loop() {
		vol := "guilds-home-bench-" + uuid.NewString()
		spec, err := sandbox.Spec{Image: testImage(), AgentID: "bench", HomeVolume: vol}.Normalize()
		if err != nil {
			b.Fatal(err)
		}
		var id string
		var ch *channelSetup
		name := "guilds-sandbox-bench-" + uuid.NewString()[:8]
		run := []func() error{
			func() error { _, err := d.ensureVolume(ctx, spec); return err },
			func() error {
				cfg, host := d.containerConfig(spec)
				if ch, err = d.prepareChannel(ctx, spec, name); err != nil {
					return err
				}
				if ch != nil {
					ch.apply(d, cfg, host)
				}
				c, err := d.cli.ContainerCreate(ctx, cfg, host, nil, nil, name)
				id = c.ID
				return err
			},
			func() error { return d.cli.ContainerStart(ctx, id, container.StartOptions{}) },
			func() error { return d.openMounts(ctx, id) },
			func() error {
				if ch != nil {
					d.channelReady(ctx, id, ch)
				}
				return nil
			},
			func() error { _, err := d.cli.ContainerInspect(ctx, id); return err },
			func() error { return benchTrue(ctx, d, id) },
			func() error { return d.Park(ctx, id) },
			func() error { return d.Unpark(ctx, id) },
			func() error { return benchTrue(ctx, d, id) },
		}
		for i, f := range run {
			t0 := time.Now()
			if err := f(); err != nil {
				b.Fatalf("%s: %v", steps[i], err)
			}
			lat[i] = append(lat[i], time.Since(t0))
		}
		_ = d.Remove(ctx, id)
		_ = d.RemoveVolume(ctx, vol)
	}
	for i, s := range steps {
		lat[i].Report(b, s)
	}
}

func benchTrue(ctx context.Context, d *Driver, id string) error {
	res, err := d.Exec(ctx, id, sandbox.ExecRequest{Cmd: []string{"true"}, Timeout: time.Minute})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
	}
	return err
}
