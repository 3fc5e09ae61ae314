// Package docker is the sandbox.Driver backed by a Docker Engine API: Docker
// itself in production, or Podman's compatible service (which is what CI
// runs against). Each sandbox is one long-lived container; commands and
// file transfers are execs into it.
package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/client"

	"github.com/guilds/guilds/sandbox"
)

// Options configure the docker driver.
type Options struct {
	// Client talks to the engine; nil = one built from the environment
	// (DOCKER_HOST, DOCKER_API_VERSION, DOCKER_CERT_PATH…) that negotiates
	// the API version with the engine.
	Client *client.Client
	// Scope is recorded as the guilds.scope label; List and Cleanup then
	// see only this scope's containers. Use it when several platforms (or
	// test runs) share an engine.
	Scope string
	// HomeVolumeOpts are the engine's volume driver options for every new
	// home volume (Spec.HomeVolume), e.g. a size where the engine's local
	// driver can enforce one ("size" on XFS with project quotas; the tests
	// use a tmpfs, which keeps nothing across a stop); nil = none, a home
	// as big as the engine's disk.
	HomeVolumeOpts map[string]string
	// ChannelDir turns on the command channel (channel.go, ADR 0711): a
	// folder on the worker's host, which must be the engine's host too,
	// where each sandbox gets a folder for its socket. Empty = every
	// command through the engine's exec (a remote engine).
	ChannelDir string
	// ChannelServer is the host path of a guilds-sandboxd binary (static)
	// to mount in every sandbox, for images that do not carry one;
	// empty = the image's, named by its guilds.sandboxd label.
	ChannelServer string
	// PoolDir is a folder on the worker's host (the engine's host) for the
	// pool's mount points (pool.go, ADR 0712); empty = no pool.
	PoolDir string
	// PullMissing pulls an image the engine does not have at Create.
	PullMissing bool
	// Logger receives lifecycle events; nil = discard.
	Logger *slog.Logger
}

// Driver implements sandbox.Driver over the Docker Engine API.
type Driver struct {
	cli   *client.Client
	scope string
	pull  bool
	log   *slog.Logger
	// volumeOpts is Options.HomeVolumeOpts.
	volumeOpts map[string]string
	// chanDir and chanServer are Options.ChannelDir and ChannelServer;
	// channels holds a channel.Client per sandbox id that has one.
	chanDir, chanServer string
	channels            sync.Map
	// chanOff: a channel never came up; no later sandbox tries one.
	chanOff atomic.Bool
	// awake holds the ids of sandboxes parked without a freeze (park.go).
	awake sync.Map
	// poolDir is Options.PoolDir; pool is set once by StartPool.
	poolDir string
	pool    atomic.Pointer[pool]
}

var _ sandbox.Driver = (*Driver)(nil)

// New returns a driver. It does not contact the engine; see Ping.
func New(opts Options) (*Driver, error) {
	if opts.Client == nil {
		cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
		if err != nil {
			return nil, fmt.Errorf("sandbox/docker: client: %w", err)
		}
		opts.Client = cli
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	for _, p := range []string{opts.ChannelDir, opts.ChannelServer, opts.PoolDir} {
		if p != "" && !filepath.IsAbs(p) {
			return nil, fmt.Errorf("%w: channel path %q must be absolute", sandbox.ErrInvalid, p)
		}
	}
	return &Driver{cli: opts.Client, scope: opts.Scope, pull: opts.PullMissing, log: opts.Logger, volumeOpts: opts.HomeVolumeOpts,
		chanDir: opts.ChannelDir, chanServer: opts.ChannelServer, poolDir: opts.PoolDir}, nil
}

// Ping checks that the engine answers (and settles the API version).
func (d *Driver) Ping(ctx context.Context) error {
	if _, err := d.cli.Ping(ctx); err != nil {
		return fmt.Errorf("sandbox/docker: engine unreachable: %w", err)
	}
	return nil
}

// Close removes the pooled sandboxes no agent claimed and releases the
// client's connections.
func (d *Driver) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	d.StopPool(ctx)
	return d.cli.Close()
}

// keeper is the default PID 1: it idles, stops at once on SIGTERM, and its
// wait reaps the orphans that execs leave behind.
var keeper = []string{"/bin/sh", "-c", `trap 'exit 0' TERM INT; while :; do sleep 3600 & wait; done`}

// Create creates and starts the container with the secure defaults.
func (d *Driver) Create(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return sandbox.Sandbox{}, err
	}
	if spec.Image == "" {
		return sandbox.Sandbox{}, fmt.Errorf("%w: image is required", sandbox.ErrInvalid)
	}
	if sb, ok := d.claim(ctx, spec); ok {
		return sb, nil
	}
	if spec.HomeVolume != "" {
		if _, err := d.ensureVolume(ctx, spec); err != nil {
			return sandbox.Sandbox{}, err
		}
	}
	cfg, host := d.containerConfig(spec)
	sb, err := d.start(ctx, spec, cfg, host)
	if err != nil {
		return sandbox.Sandbox{}, err
	}
	d.log.InfoContext(ctx, "sandbox created", "driver", "docker", "sandbox", sb.ID, "agent", spec.AgentID, "run", spec.RunID)
	return sb, nil
}

// start creates and starts a container from cfg and host, with the command
// channel when it gets one, and returns it running with its mounts open.
func (d *Driver) start(ctx context.Context, spec sandbox.Spec, cfg *container.Config, host *container.HostConfig) (sandbox.Sandbox, error) {
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "guilds-sandbox-" + hex.EncodeToString(b[:])
	ch, err := d.prepareChannel(ctx, spec, name)
	if err != nil {
		return sandbox.Sandbox{}, err
	}
	if ch != nil {
		ch.apply(d, cfg, host)
	}

	created, err := d.cli.ContainerCreate(ctx, cfg, host, nil, nil, name)
	if cerrdefs.IsNotFound(err) && d.pull {
		if err = d.pullImage(ctx, spec.Image); err == nil {
			created, err = d.cli.ContainerCreate(ctx, cfg, host, nil, nil, name)
		}
	}
	if err != nil {
		d.dropChannel("", name)
		return sandbox.Sandbox{}, fmt.Errorf("sandbox/docker: create: %w", err)
	}
	if err := d.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		_ = d.cli.ContainerRemove(context.WithoutCancel(ctx), created.ID, container.RemoveOptions{Force: true})
		d.dropChannel(created.ID, name)
		return sandbox.Sandbox{}, fmt.Errorf("sandbox/docker: start: %w", err)
	}
	if err := d.openMounts(ctx, created.ID); err != nil {
		_ = d.cli.ContainerRemove(context.WithoutCancel(ctx), created.ID, container.RemoveOptions{Force: true})
		d.dropChannel(created.ID, name)
		return sandbox.Sandbox{}, err
	}
	if ch != nil {
		d.channelReady(ctx, created.ID, ch)
	}
	sb := sandbox.Sandbox{ID: created.ID, AgentID: spec.AgentID, RunID: spec.RunID, Created: time.Now().UTC(), Labels: cfg.Labels}
	if info, err := d.cli.ContainerInspect(ctx, created.ID); err == nil {
		if t, err := time.Parse(time.RFC3339Nano, info.Created); err == nil {
			sb.Created = t.UTC()
		}
	}
	return sb, nil
}

// containerConfig is where the secure defaults live.
func (d *Driver) containerConfig(spec sandbox.Spec) (*container.Config, *container.HostConfig) {
	entrypoint := keeper
	if len(spec.Command) > 0 {
		entrypoint = spec.Command
	}
	cfg := &container.Config{
		Image:      spec.Image,
		Entrypoint: entrypoint,
		Cmd:        []string{},
		Env:        sandbox.EnvList(map[string]string{"HOME": sandbox.HomeDir}, spec.Env),
		Labels:     spec.AllLabels(d.scope),
		User:       spec.User,
		WorkingDir: sandbox.HomeDir,
		Hostname:   "sandbox",
	}

	// Writable places on a read-only root, open to whichever user the
	// image runs as (the sticky bit keeps users' files apart). Owning them
	// by uid would be tidier, but tmpfs uid= options are not portable
	// across engines (Podman 4 refuses them).
	owner := ",mode=1777"
	size := ",size=" + strconv.Itoa(sandbox.DefaultTmpfsSize)
	pids := spec.PidsLimit
	network := "none"
	if spec.Network {
		network = "" // the engine's default network
	}
	host := &container.HostConfig{
		NetworkMode:    container.NetworkMode(network),
		ReadonlyRootfs: !spec.WritableRootfs,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		Tmpfs: map[string]string{
			sandbox.HomeDir: "rw,nosuid,nodev" + size + owner,
			// Requests and tokens only: nothing there is meant to run.
			sandbox.RunDir: "rw,nosuid,nodev,noexec,size=67108864" + owner,
			sandbox.TmpDir: "rw,nosuid,nodev" + size + ",mode=1777",
		},
		Resources: container.Resources{
			Memory:     spec.Memory,
			MemorySwap: spec.Memory, // equal to Memory: no swap on top
			NanoCPUs:   int64(spec.CPUs * 1e9),
			PidsLimit:  &pids,
		},
		RestartPolicy: container.RestartPolicy{Name: container.RestartPolicyDisabled},
	}
	if spec.HomeVolume != "" {
		// The home outlives the container on its volume. An empty new
		// volume is filled from the image's /home/agent (owner included).
		delete(host.Tmpfs, sandbox.HomeDir)
		host.Mounts = []mount.Mount{{Type: mount.TypeVolume, Source: spec.HomeVolume, Target: sandbox.HomeDir}}
	}
	for _, b := range spec.Binds {
		host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeBind, Source: b.Source, Target: b.Target, ReadOnly: b.ReadOnly})
	}
	return cfg, host
}

// openMounts makes the writable mounts usable by any sandbox user. The
// tmpfs mode option is not enough on every engine: Podman derives a nested
// mount's mode from the directory under it (so /run/guilds below Podman's
// own /run tmpfs ends up 1755). Root owns those mounts, so it can chmod them
// without any capability; a mount the image gave to another user keeps its
// owner and mode (root cannot change them, having no CAP_FOWNER).
func (d *Driver) openMounts(ctx context.Context, id string) error {
	res, err := d.exec(ctx, id, "0", sandbox.ExecRequest{
		Cmd:       []string{"/bin/sh", "-c", `for m in "$@"; do [ "$(stat -c %u "$m")" = 0 ] && chmod 1777 "$m"; done; exit 0`, "guilds-mounts", sandbox.HomeDir, sandbox.RunDir, sandbox.TmpDir},
		Dir:       "/",
		Timeout:   30 * time.Second,
		MaxOutput: 4096,
	})
	if err != nil {
		return fmt.Errorf("sandbox/docker: prepare mounts: %w", err)
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("sandbox/docker: prepare mounts: exit %d: %s", res.ExitCode, strings.TrimSpace(string(res.Stderr)))
	}
	return nil
}

func (d *Driver) pullImage(ctx context.Context, ref string) error {
	rc, err := d.cli.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return err
	}
	defer rc.Close()
	_, err = io.Copy(io.Discard, rc)
	return err
}

// Remove force-removes the container, if it is one of ours.
func (d *Driver) Remove(ctx context.Context, id string) error {
	info, err := d.cli.ContainerInspect(ctx, id)
	if cerrdefs.IsNotFound(err) {
		d.channels.Delete(id)
		d.awake.Delete(id)
		d.release(id)
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox/docker: remove: %w", err)
	}
	if info.Config == nil || !d.owns(info.Config.Labels) {
		// Not a sandbox of this driver: nothing of ours to remove.
		return nil
	}
	err = d.cli.ContainerRemove(ctx, info.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) && !isRemovalInProgress(err) {
		return fmt.Errorf("sandbox/docker: remove: %w", err)
	}
	d.dropChannel(info.ID, info.Name)
	d.awake.Delete(info.ID)
	d.release(info.ID)
	d.log.InfoContext(ctx, "sandbox removed", "driver", "docker", "sandbox", info.ID)
	return nil
}

func isRemovalInProgress(err error) bool {
	return cerrdefs.IsConflict(err) && strings.Contains(err.Error(), "in progress")
}

func (d *Driver) owns(labels map[string]string) bool {
	return labels[sandbox.LabelManaged] == "true" && (d.scope == "" || labels[sandbox.LabelScope] == d.scope)
}

// List returns the managed containers (running or not), newest first.
func (d *Driver) List(ctx context.Context) ([]sandbox.Sandbox, error) {
	f := filters.NewArgs(filters.Arg("label", sandbox.LabelManaged+"=true"))
	if d.scope != "" {
		f.Add("label", sandbox.LabelScope+"="+d.scope)
	}
	list, err := d.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, fmt.Errorf("sandbox/docker: list: %w", err)
	}
	out := make([]sandbox.Sandbox, 0, len(list))
	for _, c := range list {
		if !d.owns(c.Labels) || d.pooled(c.ID) { // the filter is the engine's; check it anyway
			continue
		}
		sb := sandbox.Sandbox{
			ID: c.ID, AgentID: c.Labels[sandbox.LabelAgent], RunID: c.Labels[sandbox.LabelRun],
			Created: time.Unix(c.Created, 0).UTC(), Labels: c.Labels,
		}
		if agent, ok := d.claimedAgent(c.ID); ok {
			sb.AgentID = agent
		}
		out = append(out, sb)
	}
	slices.SortFunc(out, func(a, b sandbox.Sandbox) int { return b.Created.Compare(a.Created) })
	return out, nil
}

// Cleanup removes the managed containers created more than olderThan ago.
// It carries on past a failed removal and reports every failure.
func (d *Driver) Cleanup(ctx context.Context, olderThan time.Duration) ([]sandbox.Sandbox, error) {
	all, err := d.List(ctx)
	if err != nil {
		return nil, err
	}
	cutoff := time.Now().Add(-olderThan)
	var removed []sandbox.Sandbox
	var errs []error
	for _, s := range all {
		if s.Created.After(cutoff) {
			continue
		}
		if err := d.Remove(ctx, s.ID); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, s)
	}
	if len(removed) > 0 {
		d.log.InfoContext(ctx, "sandboxes cleaned up", "driver", "docker", "count", len(removed))
	}
	return removed, errors.Join(errs...)
}
