// Package wallettest runs the real Ethereum node the Wallet's tests talk to:
// ganache, from the npm package .ci/run installs.
package wallettest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/guilds/guilds/internal/testproc"
)

// bin finds the npm ganache CLI: GUILDS_GANACHE, else the prefix .ci/run
// installs it under. Without it the test skips, except on CI.
func bin(t testing.TB) string {
	t.Helper()
	for _, p := range []string{os.Getenv("GUILDS_GANACHE"), "/opt/ganache/node_modules/.bin/ganache"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(p); err == nil { //nolint:gosec // G703: the test's own setting or the fixed install prefix
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("ganache is not installed (.ci/run installs it under /opt/ganache)")
	}
	t.Skip("ganache is not installed: npm install --prefix /opt/ganache ganache")
	return ""
}

// StartGanache runs a local Ethereum node (chain id 1, instant mining) on
// loopback with each key of funded holding 100 ETH, and answers its URL
// once the node says it listens.
func StartGanache(t testing.TB, funded ...string) string {
	t.Helper()
	path := bin(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	argv := []string{"--server.host", "127.0.0.1", "--server.port", fmt.Sprint(port), "--chain.chainId", "1",
		"--database.dbPath", filepath.Join(t.TempDir(), "db")}
	for _, k := range funded {
		argv = append(argv, "--wallet.accounts", "0x"+k+",100000000000000000000")
	}
	cmd := exec.Command(path, argv...) //nolint:gosec // G204: the ganache CLI .ci/run installs, with the test's own arguments
	testproc.Start(t, cmd, fmt.Sprintf("RPC Listening on 127.0.0.1:%d", port))
	return fmt.Sprintf("http://127.0.0.1:%d", port)
}
