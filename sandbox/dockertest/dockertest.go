// Package dockertest gives tests the Docker-compatible engine at DOCKER_HOST
// (Podman's service in CI, see scripts/podman-up.sh) and the sandbox images
// on it. Without an engine or an image the test is skipped, naming the step
// that provides it; with CI set it fails instead, so CI never passes by
// skipping.
package dockertest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"
	"github.com/google/uuid"

	"github.com/guilds/guilds/sandbox/channel/channeltest"
	"github.com/guilds/guilds/sandbox/docker"
)

// SandboxImage is the tag `make sandbox-image` (scripts/sandbox-image.sh)
// gives the agent sandbox image.
const SandboxImage = "guilds-sandbox:latest"

// TestImage is the busybox-only image scripts/podman-up.sh imports.
const TestImage = "guilds-sandbox-test:latest"

// Unavailable skips the test, or fails it when CI is set.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := strings.TrimSpace(strings.ReplaceAll(fmt.Sprintf(format, args...), "\n", " "))
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// Client returns a client of the engine at DOCKER_HOST, closed with the test.
func Client(t testing.TB) *client.Client {
	t.Helper()
	const hint = "run scripts/podman-up.sh and export DOCKER_HOST=unix:///tmp/podman.sock"
	if os.Getenv("DOCKER_HOST") == "" {
		Unavailable(t, "DOCKER_HOST is not set; %s", hint)
	}
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		Unavailable(t, "docker client: %v; %s", err, hint)
	}
	t.Cleanup(func() { _ = cli.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		Unavailable(t, "no engine answers at %s: %v; %s", os.Getenv("DOCKER_HOST"), err, hint)
	}
	return cli
}

// Driver returns a docker driver with a scope of its own (so the test sees
// only its sandboxes), whose sandboxes are removed with the test.
func Driver(t testing.TB) (*docker.Driver, *client.Client) {
	t.Helper()
	cli := Client(t)
	d, err := docker.New(docker.Options{Client: cli, Scope: "test-" + uuid.NewString()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = d.Cleanup(context.Background(), 0) })
	return d, cli
}

// Image returns ref after checking the engine has it; the hint says which
// step builds it.
func Image(t testing.TB, cli *client.Client, ref, hint string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.ImageInspect(ctx, ref); err != nil {
		Unavailable(t, "image %s: %v; %s", ref, err, hint)
	}
	return ref
}

// AgentImage returns the agent sandbox image: GUILDS_SANDBOX_IMAGE when
// set, else SandboxImage, built by `make sandbox-image`.
func AgentImage(t testing.TB, cli *client.Client) string {
	t.Helper()
	ref := os.Getenv("GUILDS_SANDBOX_IMAGE")
	if ref == "" {
		ref = SandboxImage
	}
	return Image(t, cli, ref, "run `make sandbox-image` (scripts/sandbox-image.sh)")
}

// BusyboxImage returns the tiny test image of scripts/podman-up.sh
// (SANDBOX_TEST_IMAGE overrides it).
func BusyboxImage(t testing.TB, cli *client.Client) string {
	t.Helper()
	ref := os.Getenv("SANDBOX_TEST_IMAGE")
	if ref == "" {
		ref = TestImage
	}
	return Image(t, cli, ref, "run scripts/podman-up.sh")
}

// ServerBinary is channeltest.ServerBinary: guilds-sandboxd built once per
// test binary, for docker.Options.ChannelServer.
func ServerBinary(t testing.TB) string { return channeltest.ServerBinary(t) }

// ChannelDriver is Driver with the command channel on (ADR 0711).
func ChannelDriver(t testing.TB) (*docker.Driver, *client.Client) {
	t.Helper()
	cli := Client(t)
	d, err := docker.New(docker.Options{Client: cli, Scope: "test-" + uuid.NewString(),
		ChannelDir: t.TempDir(), ChannelServer: ServerBinary(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = d.Cleanup(context.Background(), 0) })
	return d, cli
}

// PoolDriver is ChannelDriver with a pool folder (the pool is started by
// the caller, and stopped with the test).
func PoolDriver(t testing.TB) (*docker.Driver, *client.Client) {
	t.Helper()
	cli := Client(t)
	d, err := docker.New(docker.Options{Client: cli, Scope: "test-" + uuid.NewString(),
		ChannelDir: t.TempDir(), ChannelServer: ServerBinary(t), PoolDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = d.Cleanup(context.Background(), 0) })
	t.Cleanup(func() { d.StopPool(context.Background()) })
	return d, cli
}
