package sandbox

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ExitTimeout is the exit code reported for a command killed at its
// timeout, the convention of timeout(1) that the tools' results follow.
const ExitTimeout = 124

// KillGrace is the time between SIGTERM and SIGKILL when a command times out.
const KillGrace = 2 * time.Second

// DefaultExecTimeout applies when ExecRequest.Timeout is zero.
const DefaultExecTimeout = 2 * time.Minute

// DefaultMaxOutput caps each of stdout and stderr when
// ExecRequest.MaxOutput is zero.
const DefaultMaxOutput = 1 << 20

// ExecRequest is one command to run in a sandbox.
type ExecRequest struct {
	// Cmd is the program and its arguments; no shell is involved.
	Cmd []string
	// Env adds to (and overrides) the sandbox environment.
	Env map[string]string
	// Dir is the working directory inside the sandbox; empty = HomeDir.
	Dir string
	// Stdin feeds the command's standard input; nil = empty input.
	Stdin io.Reader
	// Timeout bounds the command; 0 = DefaultExecTimeout.
	Timeout time.Duration
	// MaxOutput caps each of Stdout and Stderr in bytes; 0 = DefaultMaxOutput.
	MaxOutput int
	// User runs the command as another uid[:gid] of the sandbox ("" = the
	// sandbox's user): the browser's own uid (BrowserUser). Only a
	// container driver can; the local driver refuses it.
	User string
}

// BrowserUser is the uid Chromium runs as in a container sandbox: not the
// agent's, so the browser cannot read the agent's 0600 files (tokens,
// requests). It needs no entry in the image's passwd.
const BrowserUser = "1001:1001"

// ExecResult is what a finished command left behind.
type ExecResult struct {
	ExitCode int
	Stdout   []byte
	Stderr   []byte
	// Truncated reports that Stdout or Stderr reached MaxOutput and the
	// rest was discarded.
	Truncated bool
	// TimedOut reports that the command was killed at its timeout;
	// ExitCode is then ExitTimeout.
	TimedOut bool
}

// Normalize returns the request with defaults filled in, or an error
// wrapping ErrInvalid.
func (r ExecRequest) Normalize() (ExecRequest, error) {
	if len(r.Cmd) == 0 || r.Cmd[0] == "" {
		return r, fmt.Errorf("%w: empty command", ErrInvalid)
	}
	if r.Timeout < 0 || r.MaxOutput < 0 {
		return r, fmt.Errorf("%w: negative timeout or output cap", ErrInvalid)
	}
	if r.Timeout == 0 {
		r.Timeout = DefaultExecTimeout
	}
	if r.MaxOutput == 0 {
		r.MaxOutput = DefaultMaxOutput
	}
	if r.Dir == "" {
		r.Dir = HomeDir
	}
	if err := CheckPath(r.Dir); err != nil {
		return r, err
	}
	if r.User != "" && !validUser(r.User) {
		return r, fmt.Errorf("%w: user %q (uid or uid:gid)", ErrInvalid, r.User)
	}
	for k := range r.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return r, fmt.Errorf("%w: environment name %q", ErrInvalid, k)
		}
	}
	return r, nil
}

// EnvList merges environments left to right (later wins) into sorted
// "NAME=value" pairs.
func EnvList(envs ...map[string]string) []string {
	merged := map[string]string{}
	for _, e := range envs {
		maps.Copy(merged, e)
	}
	out := make([]string, 0, len(merged))
	for _, k := range slices.Sorted(maps.Keys(merged)) {
		out = append(out, k+"="+merged[k])
	}
	return out
}

// CheckPath accepts clean absolute paths only, so a path means the same
// thing to every driver.
func CheckPath(p string) error {
	if !strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return fmt.Errorf("%w: path %q must be absolute", ErrInvalid, p)
	}
	for _, part := range strings.Split(p[1:], "/") {
		if part == ".." || part == "." || (part == "" && p != "/") {
			return fmt.Errorf("%w: path %q must be clean", ErrInvalid, p)
		}
	}
	return nil
}

// validUser: a numeric uid or uid:gid, neither of them root.
func validUser(u string) bool {
	uid, gid, hasGID := strings.Cut(u, ":")
	num := func(s string) bool {
		n, err := strconv.Atoi(s)
		return err == nil && n > 0 && strconv.Itoa(n) == s
	}
	return num(uid) && (!hasGID || num(gid))
}
