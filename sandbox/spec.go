package sandbox

import (
	"fmt"
	"maps"
	"regexp"
	"strings"
)

// Labels the platform puts on everything it creates.
const (
	LabelManaged = "guilds.managed"
	LabelAgent   = "guilds.agent"
	LabelRun     = "guilds.run"
	// LabelScope separates platforms (or test runs) sharing one engine:
	// a driver with a scope lists and cleans up only its own sandboxes.
	LabelScope = "guilds.scope"
)

// Paths every sandbox has writable, even with a read-only root filesystem.
const (
	HomeDir = "/home/agent"
	RunDir  = "/run/guilds"
	TmpDir  = "/tmp"
)

// Defaults applied by Spec.Normalize.
const (
	DefaultMemory    = 1 << 30 // bytes
	DefaultCPUs      = 1.0
	DefaultPidsLimit = 512
	// DefaultTmpfsSize bounds each writable tmpfs (home, run, tmp).
	DefaultTmpfsSize = 512 << 20
)

// Spec describes a sandbox to create. The zero value of every field is the
// secure choice: no network, a read-only root filesystem, default limits.
type Spec struct {
	// Image is the container image (docker driver); the local driver
	// ignores it.
	Image string
	// AgentID and RunID are recorded as labels so a sandbox can be traced
	// back to its owner and cleaned up with it.
	AgentID string
	RunID   string
	// Memory is the memory limit in bytes (swap included); 0 = DefaultMemory.
	Memory int64
	// CPUs is the CPU limit in cores; 0 = DefaultCPUs.
	CPUs float64
	// PidsLimit bounds the number of processes; 0 = DefaultPidsLimit.
	PidsLimit int64
	// Network gives the sandbox the engine's default network. Without it
	// the sandbox has a loopback interface only.
	Network bool
	// WritableRootfs turns off the read-only root filesystem, for images
	// that must write outside the tmpfs mounts.
	WritableRootfs bool
	// User runs the sandbox's processes as this user ("uid[:gid]" or a
	// name known to the image); empty = the image's user.
	User string
	// Command keeps the sandbox alive; empty = a small shell loop that
	// idles and reaps orphaned processes. Commands run through Exec.
	Command []string
	// HomeVolume keeps HomeDir on the named volume of that name instead of
	// a tmpfs, so the home outlives the sandbox: a sandbox created later
	// with the same HomeVolume finds it as it was left. The driver creates
	// the volume when missing, with the platform's labels, and refuses one
	// it did not create. Empty = a tmpfs that goes with the sandbox.
	HomeVolume string
	// Binds mount host folders into the sandbox (docker driver: the engine
	// must run on the same host; the local driver, whose sandboxes are host
	// folders already, ignores them). Empty = none.
	Binds []Bind
	// Env is set for every process of the sandbox; ExecRequest.Env wins.
	Env map[string]string
	// Labels are extra labels; keys under "guilds." are reserved.
	Labels map[string]string
}

// Normalize returns the spec with defaults filled in, or an error wrapping
// ErrInvalid. Drivers call it; callers need not.
func (s Spec) Normalize() (Spec, error) {
	if s.Memory < 0 || s.CPUs < 0 || s.PidsLimit < 0 {
		return s, fmt.Errorf("%w: negative limit", ErrInvalid)
	}
	if s.Memory == 0 {
		s.Memory = DefaultMemory
	}
	if s.CPUs == 0 {
		s.CPUs = DefaultCPUs
	}
	if s.PidsLimit == 0 {
		s.PidsLimit = DefaultPidsLimit
	}
	for k := range s.Labels {
		if strings.HasPrefix(k, "guilds.") {
			return s, fmt.Errorf("%w: label %q is reserved", ErrInvalid, k)
		}
	}
	for k := range s.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return s, fmt.Errorf("%w: environment name %q", ErrInvalid, k)
		}
	}
	if s.HomeVolume != "" {
		if err := CheckVolumeName(s.HomeVolume); err != nil {
			return s, err
		}
	}
	for _, b := range s.Binds {
		if err := b.check(); err != nil {
			return s, err
		}
	}
	return s, nil
}

// Bind is a host folder mounted in a sandbox.
type Bind struct {
	Source   string // absolute path on the engine's host
	Target   string // absolute, clean path in the sandbox, outside HomeDir, RunDir and TmpDir
	ReadOnly bool
}

func (b Bind) check() error {
	if !strings.HasPrefix(b.Source, "/") {
		return fmt.Errorf("%w: bind source %q must be an absolute host path", ErrInvalid, b.Source)
	}
	if err := CheckPath(b.Target); err != nil {
		return err
	}
	for _, d := range []string{HomeDir, RunDir, TmpDir, "/"} {
		if b.Target == d || d != "/" && strings.HasPrefix(b.Target, d+"/") {
			return fmt.Errorf("%w: bind target %q is inside %s", ErrInvalid, b.Target, d)
		}
	}
	return nil
}

var volumeName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`)

// CheckVolumeName accepts the volume names every engine accepts: a letter
// or digit, then letters, digits, '_', '.' or '-', 128 characters at most.
func CheckVolumeName(name string) error {
	if !volumeName.MatchString(name) {
		return fmt.Errorf("%w: home volume name %q (want letters, digits, '_', '.', '-', starting with a letter or digit, at most 128)", ErrInvalid, name)
	}
	return nil
}

// AllLabels returns the spec's labels plus the platform's own; scope may be
// empty.
func (s Spec) AllLabels(scope string) map[string]string {
	out := make(map[string]string, len(s.Labels)+4)
	maps.Copy(out, s.Labels)
	out[LabelManaged] = "true"
	out[LabelAgent] = s.AgentID
	out[LabelRun] = s.RunID
	if scope != "" {
		out[LabelScope] = scope
	}
	return out
}
