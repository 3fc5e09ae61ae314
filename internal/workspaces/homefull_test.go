package workspaces

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/docker"
	"github.com/guilds/guilds/sandbox/dockertest"
)

// A home whose disk is full (a 4 MiB tmpfs volume stands for it: 1024 pages, since Podman refuses size= where the disk has no project quotas) fails the
// call that wrote to it with a HomeFullError naming the cap, command and
// file API alike; the sandbox keeps answering, a failure that is not about
// space stays a plain result, the agent recovers by deleting, and another
// agent is not touched.
func TestAFullHomeFailsTheCallClearlyAndNothingElse(t *testing.T) {
	t.Parallel()
	cli := dockertest.Client(t)
	img := dockertest.AgentImage(t, cli)
	d, err := docker.New(docker.Options{Client: cli, Scope: "test-" + uuid.NewString(),
		HomeVolumeOpts: map[string]string{"type": "tmpfs", "device": "tmpfs", "o": "nr_blocks=1024,uid=1000,gid=1000"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	t.Cleanup(func() { _, _ = d.Cleanup(ctx, 0) })
	m := New(d, Options{Image: img, MaxHomeBytes: 1 << 30})
	full, other := "agent-"+uuid.NewString(), "agent-"+uuid.NewString()
	t.Cleanup(func() {
		_ = m.Close(ctx)
		for _, a := range []string{full, other} {
			_ = d.RemoveVolume(ctx, HomeVolume(a))
		}
	})

	exec(t, m, full, "echo before > note")
	res, err := m.Exec(ctx, full, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "dd if=/dev/zero of=big bs=1M count=8"}, Timeout: time.Minute})
	var hf *HomeFullError
	if !errors.As(err, &hf) || !hf.DiskFull || !strings.Contains(err.Error(), "GUILDS_MAX_HOME_GB") || !strings.Contains(err.Error(), "1024 MiB") {
		t.Fatalf("a write to the full home: err = %v (exit %d, %s)", err, res.ExitCode, res.Stderr)
	}
	if !strings.Contains(string(res.Stderr), noSpace) {
		t.Fatalf("the command's own output is kept beside the error: %q", res.Stderr)
	}
	if err := m.CopyTo(ctx, full, sandbox.HomeDir+"/more", make([]byte, 64<<10), 0o644); !IsHomeFull(err) {
		t.Fatalf("the file API into the full home: %v", err)
	}
	// Another failure in the same sandbox is the command's, not the disk's.
	res, err = m.Exec(ctx, full, sandbox.ExecRequest{Cmd: []string{"sh", "-c", "echo no >&2; exit 3"}, Timeout: time.Minute})
	if err != nil || res.ExitCode != 3 {
		t.Fatalf("a plain failure: exit %d, %v", res.ExitCode, err)
	}
	if got := exec(t, m, other, "head -c 1000000 /dev/zero > ok && echo ok"); got != "ok\n" {
		t.Fatalf("the other agent: %q", got)
	}
	if got := exec(t, m, full, "cat note; rm big; echo after > note2 && cat note2"); got != "before\nafter\n" {
		t.Fatalf("the full agent after deleting: %q", got)
	}
}
