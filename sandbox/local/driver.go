// Package local is a sandbox.Driver for development and tests that runs
// commands as ordinary child processes of the orchestrator, each sandbox
// being a directory under a root.
//
// It isolates NOTHING: commands see the host's filesystem and network and
// run as the orchestrator's user, with no memory, CPU or process limits.
// What it does keep from the contract: commands get only the sandbox's own
// environment (never the orchestrator's, which holds credentials), paths of
// the file API stay inside the sandbox directory, timeouts kill the whole
// process group, and output is capped. New refuses to build a driver unless
// Options.AllowUnisolated is set, so it cannot be picked up by accident.
//
// Sandbox paths map into the directory: /home/agent/x is
// <root>/<id>/fs/home/agent/x, and a command's working directory is mapped
// the same way. A command that names an absolute path sees the host's.
package local

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/guilds/guilds/sandbox"
)

// ErrDisabled is returned by New without Options.AllowUnisolated.
var ErrDisabled = errors.New("sandbox/local: the local driver provides no isolation and must be enabled explicitly (development and tests only)")

// Options configure the local driver.
type Options struct {
	// AllowUnisolated acknowledges that this driver isolates nothing.
	AllowUnisolated bool
	// Root holds the sandbox directories; empty = <os.TempDir>/guilds-sandboxes.
	Root string
	// Scope is recorded as the guilds.scope label; List and Cleanup then
	// see only this scope's sandboxes.
	Scope string
	// Logger receives lifecycle events; nil = discard.
	Logger *slog.Logger
	// now is replaceable so Cleanup can be tested without waiting.
	now func() time.Time
}

// Driver implements sandbox.Driver with child processes.
type Driver struct {
	root  string
	scope string
	log   *slog.Logger
	now   func() time.Time
	mu    sync.Mutex // serialises create/remove against list/cleanup
}

var _ sandbox.Driver = (*Driver)(nil)

// New returns a local driver, or ErrDisabled.
func New(opts Options) (*Driver, error) {
	if !opts.AllowUnisolated {
		return nil, ErrDisabled
	}
	if opts.Root == "" {
		opts.Root = filepath.Join(os.TempDir(), "guilds-sandboxes")
	}
	// Absolute, so HostPath names a directory that means the same from any
	// working directory.
	root, err := filepath.Abs(opts.Root)
	if err != nil {
		return nil, fmt.Errorf("sandbox/local: root: %w", err)
	}
	opts.Root = root
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.now == nil {
		opts.now = time.Now
	}
	if err := os.MkdirAll(opts.Root, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox/local: root: %w", err)
	}
	return &Driver{root: opts.Root, scope: opts.Scope, log: opts.Logger, now: opts.now}, nil
}

// meta is the sandbox.json kept next to each sandbox's filesystem.
type meta struct {
	Created time.Time         `json:"created"`
	Labels  map[string]string `json:"labels"`
	Env     map[string]string `json:"env,omitempty"`
	// HomeVolume is Spec.HomeVolume: /home/agent lives in that volume.
	HomeVolume string `json:"home_volume,omitempty"`
}

const metaFile = "sandbox.json"

var idPattern = regexp.MustCompile(`^[0-9a-f]{24}$`)

func (d *Driver) dir(id string) (string, error) {
	if !idPattern.MatchString(id) {
		return "", sandbox.ErrNotFound
	}
	dir := filepath.Join(d.root, id)
	if _, err := os.Stat(filepath.Join(dir, metaFile)); err != nil {
		return "", sandbox.ErrNotFound
	}
	return dir, nil
}

// load returns the sandbox's directory and metadata.
func (d *Driver) load(id string) (string, meta, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.loadLocked(id)
}

func (d *Driver) loadLocked(id string) (string, meta, error) {
	var m meta
	dir, err := d.dir(id)
	if err != nil {
		return "", m, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, metaFile)) //nolint:gosec // G304: dir is the sandbox's own directory (d.dir checks the id)
	if err != nil {
		return "", m, sandbox.ErrNotFound
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return "", m, fmt.Errorf("sandbox/local: %s: %w", metaFile, err)
	}
	return dir, m, nil
}

// Create makes the sandbox directory with its home, run and tmp folders.
func (d *Driver) Create(ctx context.Context, spec sandbox.Spec) (sandbox.Sandbox, error) {
	spec, err := spec.Normalize()
	if err != nil {
		return sandbox.Sandbox{}, err
	}
	var b [12]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	dir := filepath.Join(d.root, id)
	for _, p := range []string{sandbox.HomeDir, sandbox.RunDir, sandbox.TmpDir} {
		if err := os.MkdirAll(filepath.Join(dir, "fs", p), 0o700); err != nil {
			return sandbox.Sandbox{}, fmt.Errorf("sandbox/local: create: %w", err)
		}
	}
	if spec.HomeVolume != "" {
		if err := d.ensureVolume(spec); err != nil {
			_ = os.RemoveAll(dir)
			return sandbox.Sandbox{}, err
		}
	}
	m := meta{Created: d.now().UTC(), Labels: spec.AllLabels(d.scope), Env: spec.Env, HomeVolume: spec.HomeVolume}
	raw, _ := json.Marshal(m)
	d.mu.Lock()
	err = os.WriteFile(filepath.Join(dir, metaFile), raw, 0o600)
	d.mu.Unlock()
	if err != nil {
		_ = os.RemoveAll(dir)
		return sandbox.Sandbox{}, fmt.Errorf("sandbox/local: create: %w", err)
	}
	d.log.InfoContext(ctx, "sandbox created", "driver", "local", "sandbox", id, "agent", spec.AgentID, "run", spec.RunID)
	return toSandbox(id, m), nil
}

func toSandbox(id string, m meta) sandbox.Sandbox {
	return sandbox.Sandbox{
		ID: id, AgentID: m.Labels[sandbox.LabelAgent], RunID: m.Labels[sandbox.LabelRun],
		Created: m.Created, Labels: m.Labels,
	}
}

// Remove kills the processes the sandbox's commands left running (those
// that still carry its GUILDS_SANDBOX_ROOT; one that scrubbed its
// environment escapes) and deletes the sandbox directory. A home volume is
// kept.
func (d *Driver) Remove(ctx context.Context, id string) error {
	dir, err := d.dir(id)
	if errors.Is(err, sandbox.ErrNotFound) {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	killLeftovers(filepath.Join(dir, "fs"))
	// The metadata goes first, so a half-removed directory is no longer a sandbox.
	if err := os.Remove(filepath.Join(dir, metaFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sandbox/local: remove: %w", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("sandbox/local: remove: %w", err)
	}
	d.log.InfoContext(ctx, "sandbox removed", "driver", "local", "sandbox", id)
	return nil
}

// List reads the metadata of every sandbox under the root.
func (d *Driver) List(ctx context.Context) ([]sandbox.Sandbox, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	entries, err := os.ReadDir(d.root)
	if err != nil {
		return nil, fmt.Errorf("sandbox/local: list: %w", err)
	}
	var out []sandbox.Sandbox
	for _, e := range entries {
		if !e.IsDir() || !idPattern.MatchString(e.Name()) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(d.root, e.Name(), metaFile))
		if err != nil {
			continue
		}
		var m meta
		if json.Unmarshal(raw, &m) != nil || m.Labels[sandbox.LabelManaged] != "true" {
			continue
		}
		if d.scope != "" && m.Labels[sandbox.LabelScope] != d.scope {
			continue
		}
		out = append(out, toSandbox(e.Name(), m))
	}
	slices.SortFunc(out, func(a, b sandbox.Sandbox) int { return b.Created.Compare(a.Created) })
	return out, nil
}

// Cleanup removes the sandboxes created more than olderThan ago.
func (d *Driver) Cleanup(ctx context.Context, olderThan time.Duration) ([]sandbox.Sandbox, error) {
	all, err := d.List(ctx)
	if err != nil {
		return nil, err
	}
	cutoff := d.now().Add(-olderThan)
	var removed []sandbox.Sandbox
	for _, s := range all {
		if s.Created.After(cutoff) {
			continue
		}
		if err := d.Remove(ctx, s.ID); err != nil {
			return removed, err
		}
		removed = append(removed, s)
	}
	return removed, nil
}
