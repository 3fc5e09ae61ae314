package browserops

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// RelayArg is the helper's first argument when it runs as the relay.
const RelayArg = "--relay"

// ensureRelay makes sure the relay from RelayAddr to the platform's proxy
// socket runs, starting it detached (it lives as long as the sandbox).
func (c Config) ensureRelay(ctx context.Context, socket string) error {
	if c.relayUp() {
		return nil
	}
	if err := os.MkdirAll(c.stateDir(), 0o700); err != nil {
		return err
	}
	unlock, err := lockFile(ctx, filepath.Join(c.stateDir(), "relay.lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if c.relayUp() {
		return nil
	}
	exe, err := c.self()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, RelayArg, socket, c.RelayAddr) //nolint:gosec // G204: the helper itself
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start it: %w", err)
	}
	_ = cmd.Process.Release()
	for range 50 {
		if c.relayUp() {
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("it did not listen on %s", c.RelayAddr)
}

func (c Config) relayUp() bool {
	conn, err := net.DialTimeout("tcp", c.RelayAddr, 500*time.Millisecond)
	if err != nil {
		return false
	}
	_ = conn.Close()
	return true
}

// Relay listens on addr and joins every connection to the unix socket:
// the only way out of a sandbox that has no network.
func Relay(socket, addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	for {
		in, err := ln.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer func() { _ = in.Close() }()
			out, err := net.DialTimeout("unix", socket, 10*time.Second)
			if err != nil {
				_, _ = fmt.Fprintf(in, "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\nthe platform's network proxy is not reachable from this sandbox: %v\n", err)
				return
			}
			defer func() { _ = out.Close() }()
			done := make(chan struct{}, 2)
			go func() { _, _ = io.Copy(out, in); closeWrite(out); done <- struct{}{} }()
			go func() { _, _ = io.Copy(in, out); closeWrite(in); done <- struct{}{} }()
			<-done
			<-done
		}()
	}
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
}
