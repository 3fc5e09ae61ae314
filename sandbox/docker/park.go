package docker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/channel"
)

var _ sandbox.Parker = (*Driver)(nil)

// parkScript ends every process the sandbox's user may signal (kill -1
// spares PID 1, the keeper, which reaps them) and empties the scratch
// mounts, so an unparked sandbox holds what a new one would plus the home.
const parkScript = `kill -KILL -1 2>/dev/null
for d in "$@"; do find "$d" -mindepth 1 -maxdepth 1 -exec rm -rf {} + 2>/dev/null; done
exit 0`

// Park ends the sandbox's commands and freezes it (the engine's pause: a
// cgroup freezer, no CPU, the keeper's few pages of memory). Unpark is one
// engine call, where a start is a runtime create, a start and an exec.
// Through the command channel (ADR 0711) a sandbox where nothing but the
// keeper is left is not frozen, and Unpark has nothing to do.
func (d *Driver) Park(ctx context.Context, id string) error {
	if c, ok := d.channel(id); ok {
		others, err := c.Park(ctx, sandbox.RunDir, sandbox.TmpDir)
		if err == nil && others == 0 {
			// Only the keeper is left, asleep on its socket: freezing it
			// saves nothing and thawing would cost a runtime call.
			d.awake.Store(id, true)
			return nil
		}
		if err == nil {
			return d.pause(ctx, id)
		}
		if !errors.Is(err, channel.ErrUnavailable) {
			return fmt.Errorf("sandbox/docker: park: %w", err)
		}
		d.channels.Delete(id) // nothing ran: the exec below parks it
	}
	_, err := d.exec(ctx, id, "", sandbox.ExecRequest{
		Cmd:       []string{"/bin/sh", "-c", parkScript, "guilds-park", sandbox.RunDir, sandbox.TmpDir},
		Dir:       "/",
		Timeout:   30 * time.Second,
		MaxOutput: 4096,
	})
	if err != nil {
		return fmt.Errorf("sandbox/docker: park: %w", err)
	}
	return d.pause(ctx, id)
}

func (d *Driver) pause(ctx context.Context, id string) error {
	if err := d.cli.ContainerPause(ctx, id); err != nil {
		return fmt.Errorf("sandbox/docker: park: %w", err)
	}
	return nil
}

// Unpark thaws a parked sandbox.
func (d *Driver) Unpark(ctx context.Context, id string) error {
	if _, ok := d.awake.LoadAndDelete(id); ok {
		return nil
	}
	if err := d.cli.ContainerUnpause(ctx, id); err != nil {
		return fmt.Errorf("sandbox/docker: unpark: %w", err)
	}
	return nil
}
