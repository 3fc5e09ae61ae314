package mcppool

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
)

// StdioUID and StdioGID are the user and group a stdio server runs as when
// the orchestrator runs as root: nobody/nogroup by default. Another uid
// cannot read the orchestrator's /proc/<pid>/environ (where its encryption
// key and database URL sit), its memory or its files. The command must be
// executable by that user. Not root, the server runs as the orchestrator's
// own user: its environment is still only the allow-list and the login's
// values, but /proc/<parent>/environ stays readable to it, so production
// runs the orchestrator as root (dropping to this user) or runs no stdio
// servers (docs/adr/0606-stdio-isolation.md).
var StdioUID, StdioGID uint32 = 65534, 65534

// stdioSysProcAttr starts the server in its own process group (a signal for
// the orchestrator's group does not reach it; the pool ends it) and, as root,
// under StdioUID/StdioGID with no supplementary groups.
func stdioSysProcAttr() *syscall.SysProcAttr {
	a := &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() == 0 {
		a.Credential = &syscall.Credential{Uid: StdioUID, Gid: StdioGID, Groups: []uint32{}}
	}
	return a
}

var (
	stdioHomeOnce sync.Once
	stdioHomeDir  string
)

// stdioHome is the HOME of servers run as StdioUID: a directory of that user
// under the system's temporary directory (npx and friends keep caches there),
// since the orchestrator's HOME is not theirs. "" when it cannot be made.
func stdioHome() string {
	stdioHomeOnce.Do(func() {
		dir := filepath.Join(os.TempDir(), fmt.Sprintf("guilds-stdio-home-%d", StdioUID))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return
		}
		if err := os.Chown(dir, int(StdioUID), int(StdioGID)); err != nil {
			return
		}
		stdioHomeDir = dir
	})
	return stdioHomeDir
}
