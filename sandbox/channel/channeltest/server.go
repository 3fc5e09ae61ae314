// Package channeltest builds the sandbox's command server for tests that
// mount it into images carrying none (the busybox test image, an agent image
// from before the channel).
package channeltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	once sync.Once
	path string
	err  error
)

// ServerBinary builds a static guilds-sandboxd once per test binary and
// returns its path, for docker.Options.ChannelServer.
func ServerBinary(t testing.TB) string {
	t.Helper()
	once.Do(func() {
		dir, mkErr := os.MkdirTemp("", "guilds-sandboxd-")
		if mkErr != nil {
			err = mkErr
			return
		}
		path = filepath.Join(dir, "guilds-sandboxd")
		cmd := exec.Command("go", "build", "-trimpath", "-o", path, "github.com/guilds/guilds/cmd/guilds-sandboxd") //nolint:gosec // G204: a temporary path of the test's own
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, buildErr := cmd.CombinedOutput(); buildErr != nil {
			err = fmt.Errorf("building guilds-sandboxd: %v: %s", buildErr, out)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return path
}
