package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/guilds/guilds/internal/githubapp/gittokens"
)

// relayWait bounds waiting for a fresh relay to listen.
const relayWait = 5 * time.Second

// ensureRelay starts the relay to the file's proxy socket unless one
// answers; one start at a time (a lock in the temporary folder).
func ensureRelay(path string) error {
	f, err := gittokens.Read(path)
	if errors.Is(err, os.ErrNotExist) || err == nil && f.Proxy == "" {
		return nil
	}
	if err != nil {
		return err
	}
	if f.ProxySocket == "" {
		return errors.New("the tokens file names a proxy but no proxy socket")
	}
	if gittokens.RelayUp() {
		return nil
	}
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "guilds-git-relay.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer func() { _ = lock.Close() }()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	if gittokens.RelayUp() { // another call started it meanwhile
		return nil
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// guilds-browser's relay, beside this helper in the image.
	cmd := exec.Command(filepath.Join(filepath.Dir(self), "guilds-browser"), "--relay", f.ProxySocket, gittokens.RelayAddr) //nolint:gosec // G204: the image's own helper
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("cannot start it: %w", err)
	}
	_ = cmd.Process.Release()
	for deadline := time.Now().Add(relayWait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if gittokens.RelayUp() {
			return nil
		}
	}
	return fmt.Errorf("it did not listen on %s", gittokens.RelayAddr)
}
