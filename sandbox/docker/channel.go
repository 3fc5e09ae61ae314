package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/channel"
)

// The command channel (ADR 0711): when Options.ChannelDir is set and the
// image has the command server (or Options.ChannelServer mounts one), the
// sandbox's first process is guilds-sandboxd, which answers commands on a
// Unix socket in a folder of ChannelDir mounted into the sandbox. Commands
// of the sandbox's user then cost no engine call; everything else (another
// user, a sandbox without the server, a server that does not answer) goes
// through the engine's exec as before.
const (
	// ServerLabel on an image names the path of guilds-sandboxd in it.
	ServerLabel = "guilds.sandboxd"
	// channelTarget is where the channel folder appears in the sandbox.
	channelTarget = "/run/guilds-channel"
	// mountedServer is where Options.ChannelServer appears in the sandbox.
	mountedServer = "/usr/local/libexec/guilds-sandboxd"
	// Names inside the channel folder, shared with cmd/guilds-sandboxd.
	tokenFile  = "token"
	socketFile = "sock"
	// channelReady bounds the wait for the server's socket at Create.
	channelReady = 10 * time.Second
)

// channelSetup is a channel being prepared for a container.
type channelSetup struct {
	dir    string // on the host
	server string // in the sandbox
	token  string
}

// prepareChannel makes the host folder and its token file, or returns nil
// when this sandbox gets no channel.
func (d *Driver) prepareChannel(ctx context.Context, spec sandbox.Spec, name string) (*channelSetup, error) {
	if d.chanDir == "" || len(spec.Command) > 0 || d.chanOff.Load() {
		return nil, nil
	}
	server := ""
	if d.chanServer != "" {
		server = mountedServer
	} else {
		img, err := d.cli.ImageInspect(ctx, spec.Image)
		if err != nil || img.Config == nil {
			return nil, nil // Create reports a missing image itself
		}
		server = img.Config.Labels[ServerLabel]
		if server == "" || sandbox.CheckPath(server) != nil {
			return nil, nil // an image from before the channel
		}
	}
	// Only the worker's user may enter the parent folder on the host.
	if err := os.MkdirAll(d.chanDir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox/docker: channel folder: %w", err)
	}
	if err := os.Chmod(d.chanDir, 0o700); err != nil { //nolint:gosec // G302: a folder, which needs its x bit
		return nil, fmt.Errorf("sandbox/docker: channel folder: %w", err)
	}
	dir := filepath.Join(d.chanDir, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox/docker: channel folder: %w", err)
	}
	// The server runs as the sandbox's user, whose host uid the worker
	// does not know: the folder lets it in (to read and delete the token,
	// make the socket) without letting anyone list it, until channelReady
	// takes the write bit away.
	if err := os.Chmod(dir, 0o733); err != nil { //nolint:gosec // G302: the sandbox's user must enter it (see above); the parent is 0700
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox/docker: channel folder: %w", err)
	}
	token := channel.NewToken()
	if err := os.WriteFile(filepath.Join(dir, tokenFile), []byte(token+"\n"), 0o444); err != nil { //nolint:gosec // G306: the sandbox's user (uid unknown here) reads it once, before any command runs; the parent is 0700 (ADR 0711)
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox/docker: channel token: %w", err)
	}
	return &channelSetup{dir: dir, server: server, token: token}, nil
}

// apply makes the server the container's first process and mounts what it
// needs.
func (c *channelSetup) apply(d *Driver, cfg *container.Config, host *container.HostConfig) {
	cfg.Entrypoint = []string{c.server, "-dir", channelTarget}
	host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeBind, Source: c.dir, Target: channelTarget})
	if d.chanServer != "" {
		host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeBind, Source: d.chanServer, Target: mountedServer, ReadOnly: true})
	}
}

// channelReady waits for the server's socket and records the channel; without one
// the sandbox keeps the engine's exec.
func (d *Driver) channelReady(ctx context.Context, id string, c *channelSetup) {
	sock := filepath.Join(c.dir, socketFile)
	deadline := time.Now().Add(channelReady)
	for {
		if fi, err := os.Lstat(sock); err == nil && fi.Mode().Type() == os.ModeSocket {
			// The server has made its socket and deleted the token: from
			// now on nothing in the sandbox may write in the folder (it is
			// the worker host's disk, and the socket's name must stay the
			// server's).
			if err := os.Chmod(c.dir, 0o711); err != nil { //nolint:gosec // G302: the sandbox's user must still reach its socket
				d.log.WarnContext(ctx, "sandbox command channel: closing its folder; using the engine's exec", "sandbox", id, "err", err)
				return
			}
			d.channels.Store(id, channel.Client{Socket: sock, Token: c.token})
			return
		}
		if ctx.Err() != nil {
			return
		}
		if time.Now().After(deadline) {
			// Most likely the engine does not see the worker's folders
			// (another host, or a worker in a container): every later
			// sandbox would wait as long for nothing.
			d.chanOff.Store(true)
			d.log.ErrorContext(ctx, "sandbox command channel did not come up; the engine's exec serves every sandbox from now on (is ChannelDir on the engine's host?)",
				"sandbox", id, "channel_dir", d.chanDir)
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// channel returns the sandbox's channel client, if it has one.
func (d *Driver) channel(id string) (channel.Client, bool) {
	v, ok := d.channels.Load(id)
	if !ok {
		return channel.Client{}, false
	}
	return v.(channel.Client), true
}

// HasChannel reports whether commands reach the sandbox through the channel.
func (d *Driver) HasChannel(id string) bool {
	_, ok := d.channel(id)
	return ok
}

// execChannel runs req through the channel; ran false means nothing ran
// and the engine's exec should. A channel that failed before its command
// was sent is dropped: the sandbox's later commands take the exec at once.
func (d *Driver) execChannel(ctx context.Context, id string, req sandbox.ExecRequest) (sandbox.ExecResult, bool, error) {
	c, ok := d.channel(id)
	if !ok {
		return sandbox.ExecResult{}, false, nil
	}
	res, err := c.Exec(ctx, req)
	if errors.Is(err, channel.ErrUnavailable) {
		if ctx.Err() != nil {
			return sandbox.ExecResult{}, true, ctx.Err()
		}
		d.channels.Delete(id)
		d.log.WarnContext(ctx, "sandbox command channel unavailable; the engine's exec serves this sandbox from now on", "sandbox", id, "err", err)
		return sandbox.ExecResult{}, false, nil
	}
	if err != nil {
		return sandbox.ExecResult{}, true, fmt.Errorf("sandbox/docker: %w", err)
	}
	return res, true, nil
}

// dropChannel forgets the sandbox's channel and removes its host folder.
func (d *Driver) dropChannel(id, name string) {
	d.channels.Delete(id)
	if d.chanDir == "" {
		return
	}
	name = strings.TrimPrefix(name, "/")
	if name == "" || strings.ContainsAny(name, `/\`) {
		return
	}
	_ = os.RemoveAll(filepath.Join(d.chanDir, name))
}
