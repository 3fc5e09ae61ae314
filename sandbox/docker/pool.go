package docker

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/guilds/guilds/sandbox"
)

// The pool (ADR 0712): sandboxes created ahead of time, each with an empty
// folder of the worker's host mounted (read-only, as a slave of the host's
// mounts) at the home and at every bind target. Claiming one attaches the
// agent's home volume and binds on the host side, onto those folders, and
// the kernel carries the mounts into the sandbox: no engine call, no new
// process. It needs what the command channel needs (the engine on the
// worker's host, a root worker) and volumes the engine keeps as plain
// folders (no HomeVolumeOpts).

var _ sandbox.Pooler = (*Driver)(nil)

// ErrPoolUnsupported: the driver cannot keep a pool here; see the message.
var ErrPoolUnsupported = errors.New("sandbox/docker: no sandbox pool")

// pool is the driver's set of pre-created sandboxes.
type pool struct {
	tmpl    sandbox.Spec // normalised
	targets []string     // the home first, then Pool.BindTargets
	size    int
	dir     string // the shared host folder the slots' folders live in
	bound   bool   // dir was mounted on itself by StartPool
	home    []byte // the image's home, as the engine archives it
	cancel  context.CancelFunc
	done    chan struct{}

	mu       sync.Mutex
	ready    []*slot
	claimed  map[string]*slot // container id → slot
	claiming int              // claims attaching now; the filler waits for none
	broken   atomic.Bool      // a claim's mount failed: no more claims
	changed  chan struct{}    // closed and replaced on every change of ready
	wake     chan struct{}
}

// slot is one pooled sandbox and its attachment points on the host.
type slot struct {
	id     string
	dir    string
	points map[string]string // target in the sandbox → folder on the host
	labels map[string]string
	volume string // the home volume it was given at claim
	agent  string // the agent it was given to
}

// StartPool keeps p.Size sandboxes of p.Template's shape ready.
func (d *Driver) StartPool(ctx context.Context, p sandbox.Pool) error {
	if p.Size <= 0 {
		return nil
	}
	if err := d.poolSupported(); err != nil {
		return err
	}
	tmpl := p.Template
	tmpl.AgentID, tmpl.RunID, tmpl.HomeVolume, tmpl.Binds = "", "", "", nil
	tmpl, err := tmpl.Normalize()
	if err != nil {
		return err
	}
	if tmpl.Image == "" || len(tmpl.Command) > 0 || len(tmpl.Env) > 0 || len(tmpl.Labels) > 0 {
		return fmt.Errorf("%w: the template must name an image and set no command, environment or labels", sandbox.ErrInvalid)
	}
	targets := []string{sandbox.HomeDir}
	for _, t := range p.BindTargets {
		if _, err := (sandbox.Spec{Binds: []sandbox.Bind{{Source: "/", Target: t}}}).Normalize(); err != nil {
			return err
		}
		if !slices.Contains(targets, t) {
			targets = append(targets, t)
		}
	}
	bound, err := sharedFolder(d.poolDir)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrPoolUnsupported, err)
	}
	home, err := d.imageHome(ctx, tmpl.Image)
	if err != nil {
		if bound {
			_ = unshareFolder(d.poolDir)
		}
		return fmt.Errorf("%w: the image's home: %v", ErrPoolUnsupported, err)
	}
	fctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	pl := &pool{tmpl: tmpl, targets: targets, size: p.Size, dir: d.poolDir, bound: bound, home: home, cancel: cancel,
		done: make(chan struct{}), claimed: map[string]*slot{}, changed: make(chan struct{}), wake: make(chan struct{}, 1)}
	if !d.pool.CompareAndSwap(nil, pl) {
		cancel()
		return fmt.Errorf("%w: the pool is already started", sandbox.ErrInvalid)
	}
	go d.fill(fctx, pl)
	d.log.InfoContext(ctx, "sandbox pool started", "driver", "docker", "size", p.Size, "image", tmpl.Image)
	return nil
}

// poolSupported says why this driver cannot attach a home after creation.
func (d *Driver) poolSupported() error {
	switch {
	case d.chanDir == "" || d.poolDir == "":
		return fmt.Errorf("%w: the engine is not on this host (no channel or pool folder)", ErrPoolUnsupported)
	case len(d.volumeOpts) > 0:
		return fmt.Errorf("%w: home volumes with driver options are mounted by the engine only", ErrPoolUnsupported)
	case os.Geteuid() != 0:
		return fmt.Errorf("%w: attaching a home needs a root worker", ErrPoolUnsupported)
	}
	return nil
}

// PoolReady is how many pooled sandboxes wait for a claim.
func (d *Driver) PoolReady() int {
	p := d.pool.Load()
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.ready)
}

// WaitPool returns once n pooled sandboxes are ready, or with ctx's error.
func (d *Driver) WaitPool(ctx context.Context, n int) error {
	p := d.pool.Load()
	if p == nil {
		return fmt.Errorf("%w: not started", ErrPoolUnsupported)
	}
	for {
		p.mu.Lock()
		ready, changed := len(p.ready), p.changed
		p.mu.Unlock()
		if ready >= n {
			return nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("sandbox/docker: %d of %d pooled sandboxes ready: %w", ready, n, ctx.Err())
		}
	}
}

// fill keeps the pool at its size, one creation at a time, each started
// only while no claim is attaching: in a burst of first calls the engine
// serves the claims first.
func (d *Driver) fill(ctx context.Context, p *pool) {
	defer close(p.done)
	backoff := time.Second
	// "full" is news the first time and after failures; a refill after
	// every claim is not.
	announced := false
	for {
		for ctx.Err() == nil && p.missing() > 0 {
			s, err := d.newSlot(ctx, p)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				announced = false
				d.log.WarnContext(ctx, "sandbox pool: creating a sandbox failed; retrying", "err", err, "in", backoff)
				select {
				case <-time.After(backoff):
				case <-ctx.Done():
					return
				}
				backoff = min(2*backoff, time.Minute)
				continue
			}
			backoff = time.Second
			if p.add(s) == p.size {
				if announced {
					d.log.DebugContext(ctx, "sandbox pool refilled", "driver", "docker", "size", p.size)
				} else {
					d.log.InfoContext(ctx, "sandbox pool full", "driver", "docker", "size", p.size)
					announced = true
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
	}
}

// missing is how many sandboxes the pool lacks, 0 while a claim attaches
// (its end wakes the filler again).
func (p *pool) missing() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.claiming > 0 || p.broken.Load() {
		return 0
	}
	return p.size - len(p.ready)
}

// add puts a new slot in the pool and says how many are ready.
func (p *pool) add(s *slot) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ready = append(p.ready, s)
	close(p.changed)
	p.changed = make(chan struct{})
	return len(p.ready)
}

// take hands out the oldest ready slot and asks for a replacement.
func (p *pool) take() (*slot, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.ready) == 0 {
		return nil, false
	}
	s := p.ready[0]
	p.ready = p.ready[1:]
	p.claiming++
	close(p.changed)
	p.changed = make(chan struct{})
	return s, true
}

// attached records the end of a claim's attaching and wakes the filler.
func (p *pool) attached() {
	p.mu.Lock()
	p.claiming--
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// fits reports whether a Create of spec can take a pooled sandbox.
func (p *pool) fits(spec sandbox.Spec) bool {
	t := p.tmpl
	if spec.HomeVolume == "" || spec.Image != t.Image || spec.User != t.User || spec.Memory != t.Memory ||
		spec.CPUs != t.CPUs || spec.PidsLimit != t.PidsLimit || spec.Network != t.Network ||
		spec.WritableRootfs != t.WritableRootfs || len(spec.Command) > 0 || len(spec.Env) > 0 || len(spec.Labels) > 0 {
		return false
	}
	for _, b := range spec.Binds {
		if b.Target == sandbox.HomeDir || !slices.Contains(p.targets, b.Target) {
			return false
		}
	}
	return true
}

// newSlot creates one pooled sandbox: the template, with a host folder
// mounted read-only at each target, receiving the host's later mounts.
func (d *Driver) newSlot(ctx context.Context, p *pool) (*slot, error) {
	dir, err := os.MkdirTemp(p.dir, "slot-")
	if err != nil {
		return nil, fmt.Errorf("sandbox/docker: pool folder: %w", err)
	}
	s := &slot{dir: dir, points: map[string]string{}}
	cfg, host := d.containerConfig(p.tmpl)
	delete(host.Tmpfs, sandbox.HomeDir)
	cfg.Labels[sandbox.LabelPool] = "true"
	for i, target := range p.targets {
		point := filepath.Join(dir, fmt.Sprint(i))
		if err := os.Mkdir(point, 0o755); err != nil { //nolint:gosec // G301: an empty mount point, read-only in the sandbox
			_ = os.RemoveAll(dir)
			return nil, fmt.Errorf("sandbox/docker: pool folder: %w", err)
		}
		s.points[target] = point
		host.Mounts = append(host.Mounts, mount.Mount{Type: mount.TypeBind, Source: point, Target: target, ReadOnly: true,
			BindOptions: &mount.BindOptions{Propagation: mount.PropagationRSlave}})
	}
	sb, err := d.start(ctx, p.tmpl, cfg, host)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s.id, s.labels = sb.ID, sb.Labels
	return s, nil
}

// claim gives the spec's agent a pooled sandbox when one fits and is
// ready; false sends the caller to a new sandbox.
func (d *Driver) claim(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, bool) {
	p := d.pool.Load()
	if p == nil || !p.fits(spec) || d.chanOff.Load() || p.broken.Load() || d.PoolReady() == 0 {
		return sandbox.Sandbox{}, false
	}
	// The volume first: a spec the engine refuses costs no slot.
	folder, err := d.ensureVolume(ctx, spec)
	if err != nil || folder == "" {
		return sandbox.Sandbox{}, false // the new sandbox's creation reports it
	}
	s, ok := p.take()
	if !ok {
		return sandbox.Sandbox{}, false
	}
	p.mu.Lock()
	p.claimed[s.id] = s
	s.volume, s.agent = spec.HomeVolume, spec.AgentID
	p.mu.Unlock()
	err = d.attach(p, s, spec, folder)
	p.attached()
	if err != nil {
		// A mount this host refuses will be refused again: the pool stops.
		p.broken.Store(true)
		d.log.ErrorContext(ctx, "sandbox pool: attaching an agent's home failed; the pool is off and every sandbox is created on demand",
			"agent", spec.AgentID, "sandbox", s.id, "err", err)
		_ = d.Remove(context.WithoutCancel(ctx), s.id)
		return sandbox.Sandbox{}, false
	}
	labels := maps.Clone(s.labels)
	delete(labels, sandbox.LabelPool)
	labels[sandbox.LabelAgent], labels[sandbox.LabelRun] = spec.AgentID, spec.RunID
	d.log.InfoContext(ctx, "sandbox claimed from the pool", "driver", "docker", "sandbox", s.id, "agent", spec.AgentID, "run", spec.RunID)
	return sandbox.Sandbox{ID: s.id, AgentID: spec.AgentID, RunID: spec.RunID, Created: time.Now().UTC(), Labels: labels}, true
}

// attach fills the agent's home volume (its folder on the host) from the
// image when new, and mounts it and the spec's binds at the slot's points.
func (d *Driver) attach(p *pool, s *slot, spec sandbox.Spec, folder string) error {
	if err := fillNewHome(folder, p.home); err != nil {
		return fmt.Errorf("the new home: %w", err)
	}
	if err := bindInto(folder, s.points[sandbox.HomeDir], false); err != nil {
		return fmt.Errorf("the home: %w", err)
	}
	for _, b := range spec.Binds {
		if err := bindInto(b.Source, s.points[b.Target], b.ReadOnly); err != nil {
			return fmt.Errorf("%s: %w", b.Target, err)
		}
	}
	return nil
}

// release forgets a pooled sandbox being removed and takes its mounts off
// the host; the container is gone or going.
func (d *Driver) release(id string) {
	p := d.pool.Load()
	if p == nil {
		return
	}
	p.mu.Lock()
	s := p.claimed[id]
	delete(p.claimed, id)
	if s == nil {
		if i := slices.IndexFunc(p.ready, func(r *slot) bool { return r.id == id }); i >= 0 {
			s = p.ready[i]
			p.ready = slices.Delete(p.ready, i, i+1)
			close(p.changed)
			p.changed = make(chan struct{})
		}
	}
	p.mu.Unlock()
	if s == nil {
		return
	}
	for _, point := range s.points {
		if err := detach(point); err != nil {
			d.log.Warn("sandbox pool: detaching a mount", "sandbox", id, "point", point, "err", err)
		}
	}
	_ = os.RemoveAll(s.dir)
}

// pooled reports whether id is a sandbox waiting in the pool (hidden from
// List, so a worker's clean-up never takes it for an orphan).
func (d *Driver) pooled(id string) bool {
	p := d.pool.Load()
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.ContainsFunc(p.ready, func(s *slot) bool { return s.id == id })
}

// claimedAgent names the agent a claimed pooled sandbox serves, whose
// engine labels were set before the agent was known.
func (d *Driver) claimedAgent(id string) (agent string, ok bool) {
	p := d.pool.Load()
	if p == nil {
		return "", false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	s := p.claimed[id]
	if s == nil {
		return "", false
	}
	return s.agent, true
}

// volumeInUse names the claimed pooled sandbox that holds a home volume:
// the engine does not know it is in use.
func (d *Driver) volumeInUse(name string) string {
	p := d.pool.Load()
	if p == nil {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for id, s := range p.claimed {
		if s.volume == name {
			return id
		}
	}
	return ""
}

// StopPool ends the filling and removes the pooled sandboxes still
// waiting; claimed ones stay with their agents.
func (d *Driver) StopPool(ctx context.Context) {
	p := d.pool.Load()
	if p == nil {
		return
	}
	p.cancel()
	<-p.done
	p.mu.Lock()
	ready := slices.Clone(p.ready)
	p.mu.Unlock()
	for _, s := range ready {
		if err := d.Remove(ctx, s.id); err != nil {
			d.log.WarnContext(ctx, "sandbox pool: removing a waiting sandbox", "sandbox", s.id, "err", err)
		}
	}
	p.mu.Lock()
	inUse := len(p.claimed)
	p.mu.Unlock()
	if p.bound && inUse == 0 {
		if err := unshareFolder(p.dir); err != nil {
			d.log.WarnContext(ctx, "sandbox pool: unmounting its folder", "err", err)
		}
	}
}

// imageHome archives the image's home folder, which a new home volume
// starts as (the engine copies it into an empty volume it mounts itself).
func (d *Driver) imageHome(ctx context.Context, image string) ([]byte, error) {
	labels := sandbox.Spec{}.AllLabels(d.scope)
	created, err := d.cli.ContainerCreate(ctx, &container.Config{Image: image, Entrypoint: keeper, Cmd: []string{}, Labels: labels},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		return nil, err
	}
	defer func() {
		_ = d.cli.ContainerRemove(context.WithoutCancel(ctx), created.ID, container.RemoveOptions{Force: true})
	}()
	rc, _, err := d.cli.CopyFromContainer(ctx, created.ID, sandbox.HomeDir)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return readCapped(rc, sandbox.MaxFileSize)
}
