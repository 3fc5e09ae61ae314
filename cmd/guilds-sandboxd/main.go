//go:build linux

// Command guilds-sandboxd is a sandbox's first process when the worker
// reaches it through the command channel (ADR 0711): it keeps the sandbox
// alive, reaps orphans, and runs the worker's commands as its own user
// (the sandbox's) on a Unix socket in a folder the engine mounts from the
// worker's host. The socket's per-sandbox token comes in a file of that
// folder, read and deleted before the socket exists, so no command the
// worker runs can find it; the process is made non-dumpable first, so a
// command of the same user cannot read it from memory either.
//
// When the channel cannot be set up (no folder, no token) it says why on
// stderr and keeps the sandbox as the shell keeper did; the worker then
// uses the engine's exec.
package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/guilds/guilds/sandbox/channel"
)

// Names inside the channel folder, shared with the docker driver.
const (
	tokenFile  = "token"
	socketFile = "sock"
)

func main() {
	dir := flag.String("dir", "/run/guilds-channel", "the channel folder the engine mounts")
	flag.Parse()
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))

	// Before the token is in memory: no process of the same user may
	// trace this one or read its memory through /proc.
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0); errno != 0 {
		log.Error("guilds-sandboxd: prctl(PR_SET_DUMPABLE)", "err", errno)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)

	srv := &channel.Server{Log: log}
	l, err := listen(*dir, srv)
	if err != nil {
		log.Error("guilds-sandboxd: no command channel; the worker will use the engine's exec", "err", err)
		srv.Reap()
		<-stop
		os.Exit(0)
	}
	go func() {
		if err := srv.Serve(l); !errors.Is(err, net.ErrClosed) {
			log.Error("guilds-sandboxd: serve", "err", err)
		}
	}()
	<-stop
	_ = l.Close()
	os.Exit(0)
}

func listen(dir string, srv *channel.Server) (net.Listener, error) {
	tokenPath := filepath.Join(dir, tokenFile)
	raw, err := os.ReadFile(tokenPath) //nolint:gosec // G304: the token file the driver wrote in the channel folder (-dir)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(tokenPath); err != nil {
		return nil, fmt.Errorf("remove the token file: %w", err)
	}
	if srv.Token, err = channel.ParseToken(string(raw)); err != nil {
		return nil, err
	}
	sock := filepath.Join(dir, socketFile)
	_ = os.Remove(sock)
	// The umask makes the socket 0600 from the moment bind creates it.
	old := syscall.Umask(0o177)
	l, err := net.Listen("unix", sock)
	syscall.Umask(old)
	if err != nil {
		return nil, err
	}
	return l, nil
}
