//go:build !linux

package mcppool

import "syscall"

// stdioSysProcAttr: outside Linux, stdio servers run as the orchestrator's
// user in their own process group.
func stdioSysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

func stdioHome() string { return "" }
