package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/internal/capbuf"
)

// Exec runs the command as a child process in its own process group, with
// the sandbox's environment only.
func (d *Driver) Exec(ctx context.Context, id string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	req, err := req.Normalize()
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	if req.User != "" {
		return sandbox.ExecResult{}, fmt.Errorf("%w: the local driver runs every command as this process's user, not %s", sandbox.ErrInvalid, req.User)
	}
	dir, m, err := d.load(id)
	if err != nil {
		return sandbox.ExecResult{}, err
	}
	host := func(p string) string { b, rel := d.place(dir, m, p); return filepath.Join(b, rel) }
	fsRoot := filepath.Join(dir, "fs")
	base := map[string]string{
		"PATH":                os.Getenv("PATH"),
		"HOME":                host(sandbox.HomeDir),
		"TMPDIR":              host(sandbox.TmpDir),
		"GUILDS_SANDBOX_ROOT": fsRoot,
	}

	stdout, stderr := capbuf.New(req.MaxOutput), capbuf.New(req.MaxOutput)
	cmd := exec.Command(req.Cmd[0], req.Cmd[1:]...) //nolint:gosec // G204: running the agent's command is what a sandbox driver does
	cmd.Dir = host(req.Dir)
	cmd.Env = sandbox.EnvList(base, m.Env, req.Env)
	cmd.Stdin = req.Stdin
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A process that left the group but kept our pipes must not hold Wait forever.
	cmd.WaitDelay = sandbox.KillGrace + time.Second

	if err := cmd.Start(); err != nil {
		// The shell's answer for a command it cannot run, so results read
		// the same as the docker driver's.
		msg := fmt.Sprintf("%s: %v\n", req.Cmd[0], err)
		code := 126
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return sandbox.ExecResult{ExitCode: code, Stderr: []byte(msg)}, nil
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	timer := time.NewTimer(req.Timeout)
	defer timer.Stop()
	var res sandbox.ExecResult
	select {
	case err = <-done:
	case <-timer.C:
		res.TimedOut = true
		stopGroup(cmd.Process.Pid)
		err = <-done
	case <-ctx.Done():
		stopGroup(cmd.Process.Pid)
		<-done //nolint:errcheck // the caller's cancellation is the answer, not the kill's status
		return sandbox.ExecResult{}, ctx.Err()
	}

	res.Stdout, res.Stderr = stdout.Bytes(), stderr.Bytes()
	res.Truncated = stdout.Truncated() || stderr.Truncated()
	switch {
	case res.TimedOut:
		res.ExitCode = sandbox.ExitTimeout
	case err == nil:
	default:
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			if errors.Is(err, exec.ErrWaitDelay) {
				return res, nil
			}
			return res, fmt.Errorf("sandbox/local: exec: %w", err)
		}
		res.ExitCode = ee.ExitCode()
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.ExitCode = 128 + int(ws.Signal())
		}
	}
	return res, nil
}

// killLeftovers SIGKILLs every process whose environment holds the
// sandbox's GUILDS_SANDBOX_ROOT: what its commands left in the background.
func killLeftovers(fsRoot string) {
	want := []byte("GUILDS_SANDBOX_ROOT=" + fsRoot)
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(raw, []byte{0}) {
			if bytes.Equal(kv, want) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				break
			}
		}
	}
}

// stopGroup sends SIGTERM to the process group, waits up to KillGrace for
// it to empty, then sends SIGKILL.
func stopGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	deadline := time.Now().Add(sandbox.KillGrace)
	for time.Now().Before(deadline) {
		if !groupAlive(pgid) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// groupAlive reports whether a process of the group is still running.
// Zombies do not count: an orphan's zombie waits for the host's init to
// reap it, which can take a while and would hold back the escalation.
func groupAlive(pgid int) bool {
	if errors.Is(syscall.Kill(-pgid, 0), syscall.ESRCH) {
		return false
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return true
	}
	want := strconv.Itoa(pgid)
	for _, e := range entries {
		if e.Name()[0] < '0' || e.Name()[0] > '9' {
			continue
		}
		raw, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid pgrp …; comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(raw, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(raw[i+1:]))
		if len(f) > 2 && f[2] == want && f[0] != "Z" {
			return true
		}
	}
	return false
}
