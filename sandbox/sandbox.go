// Package sandbox is the room an agent's tools run in: a long-lived,
// isolated environment the orchestrator creates once per agent (or run) and
// then drives with short commands and small file transfers.
//
// Driver is the seam between the tools and the technology that provides the
// isolation. The docker driver (sandbox/docker) is the real one; the local
// driver (sandbox/local) runs commands as plain child processes for
// development and tests and isolates nothing.
//
// Every driver promises the same contract:
//   - a Spec's zero values mean the secure choice (see Spec);
//   - everything a driver creates carries the managed label, so List and
//     Cleanup see the platform's own sandboxes and never anything else;
//   - an exec that outlives its timeout has its whole process group sent
//     SIGTERM, then SIGKILL after KillGrace, and reports ExitTimeout;
//   - output is capped, never buffered without bound.
package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"time"
)

// Driver creates and drives sandboxes. Implementations are safe for
// concurrent use.
type Driver interface {
	// Create starts a sandbox described by spec and returns it running.
	Create(ctx context.Context, spec Spec) (Sandbox, error)
	// Exec runs one command to completion (or to its timeout) inside the
	// sandbox. A non-zero exit code is a result, not an error; errors are
	// reserved for failures of the driver or the sandbox itself.
	Exec(ctx context.Context, id string, req ExecRequest) (ExecResult, error)
	// CopyTo writes content to an absolute path inside the sandbox with the
	// given permission bits, creating parent directories. The write is
	// atomic: a reader sees the old file or the new one.
	CopyTo(ctx context.Context, id, path string, content []byte, mode fs.FileMode) error
	// CopyFrom reads a regular file of at most MaxFileSize bytes.
	CopyFrom(ctx context.Context, id, path string) (File, error)
	// Remove stops and deletes the sandbox. Removing a sandbox that does
	// not exist is not an error.
	Remove(ctx context.Context, id string) error
	// List returns the sandboxes this driver manages, newest first.
	List(ctx context.Context) ([]Sandbox, error)
	// Cleanup removes the managed sandboxes created more than olderThan
	// ago and returns the ones it removed. Home volumes are kept.
	Cleanup(ctx context.Context, olderThan time.Duration) ([]Sandbox, error)
	// RemoveVolume deletes a home volume (Spec.HomeVolume) the driver
	// created. Removing a volume that does not exist, or that the driver
	// did not create, is not an error; one a sandbox still uses is.
	RemoveVolume(ctx context.Context, name string) error
}

// Sandbox describes one sandbox as the driver sees it.
type Sandbox struct {
	ID      string
	AgentID string
	RunID   string
	Created time.Time
	Labels  map[string]string
}

// File is the content and permission bits of a file read from a sandbox.
type File struct {
	Content []byte
	Mode    fs.FileMode
}

// MaxFileSize bounds CopyTo and CopyFrom. The file API carries requests,
// tokens and small artefacts; bulk data belongs elsewhere.
const MaxFileSize = 16 << 20

var (
	// ErrNotFound: no sandbox with that id, or no such file in it.
	ErrNotFound = errors.New("sandbox: not found")
	// ErrNotRunning: the sandbox exists but has stopped (its main process
	// exited or was killed); only Remove is of use on it.
	ErrNotRunning = errors.New("sandbox: not running")
	// ErrInvalid: a Spec, ExecRequest or path the driver refuses.
	ErrInvalid = errors.New("sandbox: invalid request")
	// ErrTooLarge: a file over MaxFileSize.
	ErrTooLarge = errors.New("sandbox: file too large")
)

// VolumeLister is a driver that can name the home volumes it created
// (within its scope), so a worker can reap those no agent owns any more.
type VolumeLister interface {
	ListVolumes(ctx context.Context) ([]string, error)
}
