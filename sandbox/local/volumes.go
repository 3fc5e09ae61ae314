package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/guilds/guilds/sandbox"
)

// A home volume is a directory under <root>/volumes/ that outlives the
// sandboxes using it: /home/agent of a sandbox created with
// Spec.HomeVolume = "v" is <root>/volumes/v/, its labels in v.json.

func (d *Driver) volumeDir(name string) string { return filepath.Join(d.root, "volumes", name) }

func (d *Driver) volumeLabels(name string) (map[string]string, error) {
	raw, err := os.ReadFile(d.volumeDir(name) + ".json")
	if err != nil {
		return nil, err
	}
	var labels map[string]string
	if err := json.Unmarshal(raw, &labels); err != nil {
		return nil, fmt.Errorf("sandbox/local: volume %s: %w", name, err)
	}
	return labels, nil
}

func (d *Driver) owns(labels map[string]string) bool {
	return labels[sandbox.LabelManaged] == "true" && (d.scope == "" || labels[sandbox.LabelScope] == d.scope)
}

// ensureVolume creates the home volume, or checks an existing one is ours.
func (d *Driver) ensureVolume(spec sandbox.Spec) error {
	labels, err := d.volumeLabels(spec.HomeVolume)
	if err == nil {
		if !d.owns(labels) {
			return fmt.Errorf("%w: home volume %q exists and is not this platform's", sandbox.ErrInvalid, spec.HomeVolume)
		}
		return os.MkdirAll(d.volumeDir(spec.HomeVolume), 0o700)
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if err := os.MkdirAll(d.volumeDir(spec.HomeVolume), 0o700); err != nil {
		return fmt.Errorf("sandbox/local: home volume: %w", err)
	}
	labels = spec.AllLabels(d.scope)
	delete(labels, sandbox.LabelRun) // a home belongs to the agent, not to one run
	raw, _ := json.Marshal(labels)
	if err := os.WriteFile(d.volumeDir(spec.HomeVolume)+".json", raw, 0o600); err != nil {
		return fmt.Errorf("sandbox/local: home volume: %w", err)
	}
	return nil
}

// RemoveVolume deletes a home volume this driver created, unless a
// sandbox still uses it.
func (d *Driver) RemoveVolume(ctx context.Context, name string) error {
	if err := sandbox.CheckVolumeName(name); err != nil {
		return err
	}
	labels, err := d.volumeLabels(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !d.owns(labels) {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	entries, err := os.ReadDir(d.root)
	if err != nil {
		return fmt.Errorf("sandbox/local: remove volume: %w", err)
	}
	for _, e := range entries {
		if _, m, err := d.loadLocked(e.Name()); err == nil && m.HomeVolume == name {
			return fmt.Errorf("sandbox/local: remove volume %s: in use by sandbox %s", name, e.Name())
		}
	}
	if err := os.Remove(d.volumeDir(name) + ".json"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("sandbox/local: remove volume %s: %w", name, err)
	}
	if err := os.RemoveAll(d.volumeDir(name)); err != nil {
		return fmt.Errorf("sandbox/local: remove volume %s: %w", name, err)
	}
	d.log.InfoContext(ctx, "sandbox home volume removed", "driver", "local", "volume", name)
	return nil
}

// place maps a sandbox path to a base directory on the host and a path
// relative to it ("." for the base itself).
func (d *Driver) place(dir string, m meta, p string) (base, rel string) {
	if m.HomeVolume != "" && (p == sandbox.HomeDir || strings.HasPrefix(p, sandbox.HomeDir+"/")) {
		base, rel = d.volumeDir(m.HomeVolume), strings.TrimPrefix(p[len(sandbox.HomeDir):], "/")
	} else {
		base, rel = filepath.Join(dir, "fs"), strings.TrimPrefix(p, "/")
	}
	if rel == "" {
		rel = "."
	}
	return base, rel
}

// HostPath returns the host path that stands for the sandbox path p, so a
// helper that is told where its home is (codeproto.HomeEnv) can find it.
// Links are not resolved.
func (d *Driver) HostPath(id, p string) (string, error) {
	if err := sandbox.CheckPath(p); err != nil {
		return "", err
	}
	dir, m, err := d.load(id)
	if err != nil {
		return "", err
	}
	base, rel := d.place(dir, m, p)
	return filepath.Join(base, rel), nil
}

// ListVolumes names the home volumes this driver created in its scope.
func (d *Driver) ListVolumes(ctx context.Context) ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(d.root, "volumes"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox/local: list volumes: %w", err)
	}
	var out []string
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		if labels, err := d.volumeLabels(name); err == nil && d.owns(labels) {
			out = append(out, name)
		}
	}
	return out, nil
}
