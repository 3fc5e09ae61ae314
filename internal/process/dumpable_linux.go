package process

import "golang.org/x/sys/unix"

// NonDumpable marks the process non-dumpable (PR_SET_DUMPABLE 0). The kernel
// then owns its /proc/<pid> entries as root and refuses /proc/<pid>/environ,
// mem and ptrace to every process without CAP_SYS_PTRACE, the same user's
// included: a stdio MCP server that runs as the orchestrator's user (a
// non-root container) can no longer read the credentials the orchestrator
// started with. Children it executes are dumpable again (execve resets the
// flag), which is what their own tools expect.
func NonDumpable() error {
	return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
}
