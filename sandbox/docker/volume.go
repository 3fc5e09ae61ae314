package docker

import (
	"context"
	"fmt"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"

	"github.com/guilds/guilds/sandbox"
)

// ensureVolume creates the spec's home volume with the platform's labels,
// or checks that an existing one is the driver's own: a volume someone else
// made is never mounted into a sandbox. It returns the volume's folder on
// the engine's host. One engine call: a create of a name that exists
// answers the existing volume, labels and all (Docker and Podman alike).
func (d *Driver) ensureVolume(ctx context.Context, spec sandbox.Spec) (string, error) {
	labels := spec.AllLabels(d.scope)
	delete(labels, sandbox.LabelRun) // a home belongs to the agent, not to one run
	v, err := d.cli.VolumeCreate(ctx, volume.CreateOptions{Name: spec.HomeVolume, Labels: labels, DriverOpts: d.volumeOpts})
	if err != nil {
		return "", fmt.Errorf("sandbox/docker: home volume %s: %w", spec.HomeVolume, err)
	}
	if !d.owns(v.Labels) {
		return "", fmt.Errorf("%w: home volume %q exists and is not this platform's (labels %v)", sandbox.ErrInvalid, spec.HomeVolume, v.Labels)
	}
	d.log.DebugContext(ctx, "sandbox home volume ready", "driver", "docker", "volume", spec.HomeVolume, "agent", spec.AgentID)
	return v.Mountpoint, nil
}

// RemoveVolume deletes a home volume this driver created.
func (d *Driver) RemoveVolume(ctx context.Context, name string) error {
	if err := sandbox.CheckVolumeName(name); err != nil {
		return err
	}
	if id := d.volumeInUse(name); id != "" {
		return fmt.Errorf("sandbox/docker: remove volume %s: in use by sandbox %s", name, id)
	}
	v, err := d.cli.VolumeInspect(ctx, name)
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("sandbox/docker: remove volume %s: %w", name, err)
	}
	if !d.owns(v.Labels) {
		return nil // not ours: nothing of ours to remove
	}
	if err := d.cli.VolumeRemove(ctx, name, false); err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("sandbox/docker: remove volume %s: %w", name, err)
	}
	d.log.InfoContext(ctx, "sandbox home volume removed", "driver", "docker", "volume", name)
	return nil
}

// ListVolumes names the home volumes this driver created in its scope.
func (d *Driver) ListVolumes(ctx context.Context) ([]string, error) {
	f := filters.NewArgs(filters.Arg("label", sandbox.LabelManaged+"=true"))
	if d.scope != "" {
		f.Add("label", sandbox.LabelScope+"="+d.scope)
	}
	list, err := d.cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return nil, fmt.Errorf("sandbox/docker: list volumes: %w", err)
	}
	var out []string
	for _, v := range list.Volumes {
		if v != nil && d.owns(v.Labels) { // the filter is the engine's; check it anyway
			out = append(out, v.Name)
		}
	}
	return out, nil
}
