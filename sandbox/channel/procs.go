//go:build linux

package channel

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/guilds/guilds/sandbox"
)

// killGroup sends SIGTERM to the process group, waits up to
// sandbox.KillGrace for its live (non-zombie) members, then sends SIGKILL.
func killGroup(pg int) {
	if syscall.Kill(-pg, syscall.SIGTERM) != nil {
		return
	}
	deadline := time.Now().Add(sandbox.KillGrace)
	for time.Now().Before(deadline) {
		if !groupAlive(pg) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = syscall.Kill(-pg, syscall.SIGKILL)
	// SIGKILL cannot be ignored, but on a loaded host (or a sandbox at its
	// CPU quota) the members may take a while to be scheduled and die; the
	// caller reports the timeout only once they have, or once this gives up.
	deadline = time.Now().Add(killWait)
	for groupAlive(pg) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
}

// killWait bounds the wait for a SIGKILLed group to be gone.
const killWait = 10 * time.Second

func groupAlive(pg int) bool {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f) //nolint:gosec // G304: a /proc/<pid>/stat path from the glob
		if err != nil {
			continue
		}
		st, g, ok := statFields(b)
		if ok && g == pg && st != 'Z' {
			return true
		}
	}
	return false
}

// statFields reads the state and process group of a /proc/<pid>/stat line;
// the command name may hold spaces and parentheses, so parsing starts
// after the last ')'.
func statFields(b []byte) (state byte, pgrp int, ok bool) {
	i := len(b) - 1
	for i >= 0 && b[i] != ')' {
		i--
	}
	var ppid int
	if i < 0 {
		return 0, 0, false
	}
	if _, err := fmt.Sscanf(string(b[i+1:]), " %c %d %d", &state, &ppid, &pgrp); err != nil {
		return 0, 0, false
	}
	return state, pgrp, true
}

// park ends every process the server may signal but itself (kill(-1)
// spares the caller and PID 1, which the server is) and empties clear.
func (s *Server) park(clear []string) Exit {
	if os.Getpid() != 1 {
		return Exit{Code: -1, Error: "park needs the server to be the sandbox's PID 1"}
	}
	for range 100 {
		// An error: nothing left that the server may signal.
		if syscall.Kill(-1, syscall.SIGKILL) != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	for _, d := range clear {
		if sandbox.CheckPath(d) != nil || d == "/" {
			continue
		}
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			_ = os.RemoveAll(filepath.Join(d, e.Name()))
		}
	}
	return Exit{Code: 0, Others: liveOthers()}
}

// liveOthers counts the live processes besides this one.
func liveOthers() int {
	n := 0
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	self := os.Getpid()
	for _, f := range stats {
		pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		if err != nil || pid == self {
			continue
		}
		if b, err := os.ReadFile(f); err == nil { //nolint:gosec // G304: a /proc/<pid>/stat path from the glob
			if st, _, ok := statFields(b); ok && st != 'Z' {
				n++
			}
		}
	}
	return n
}
