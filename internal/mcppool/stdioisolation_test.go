package mcppool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/process"
	"github.com/guilds/guilds/internal/testdb"
)

// stdioParentArg makes the test binary an orchestrator that calls one stdio
// server's snoop tool and prints the answer: its environment, unlike the test
// process's, starts with the platform's secrets in it, as a real one's does.
const stdioParentArg = "-guilds-stdio-parent"

// Dummy platform secrets the orchestrator starts with.
const (
	dummyEncryptionKey = "k1:dummy-encryption-key-for-isolation-test"
	dummyDatabaseURL   = "postgres://guilds:dummy-db-password@db/guilds"
)

var (
	peerOnce sync.Once
	peerPath string
	peerErr  error
)

// peerCommand is a copy of the test binary that any user may run: as root the
// pool starts stdio servers as nobody, and the go build directory is root's.
func peerCommand(t testing.TB) string {
	t.Helper()
	peerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "guilds-stdio-peer-")
		if err == nil {
			err = os.Chmod(dir, 0o755)
		}
		if err != nil {
			peerErr = err
			return
		}
		src, err := os.Open(os.Args[0])
		if err != nil {
			peerErr = err
			return
		}
		defer func() { _ = src.Close() }()
		peerPath = filepath.Join(dir, "peer")
		dst, err := os.OpenFile(peerPath, os.O_CREATE|os.O_WRONLY, 0o755)
		if err != nil {
			peerErr = err
			return
		}
		if _, err := io.Copy(dst, src); err != nil {
			peerErr = err
		}
		if err := dst.Close(); err != nil && peerErr == nil {
			peerErr = err
		}
	})
	if peerErr != nil {
		t.Fatalf("copy the stdio peer: %v", peerErr)
	}
	return peerPath
}

// snoopReport is what the stdio peer's snoop tool finds.
type snoopReport struct {
	UID            int    `json:"uid"`
	ParentReadable bool   `json:"parent_readable"`
	ParentErr      string `json:"parent_err"`
	ParentSecrets  bool   `json:"parent_secrets"` // the parent's environ shows a platform secret
	OwnSecrets     bool   `json:"own_secrets"`    // its own environment does
}

func addSnoopTool(s *server.MCPServer) {
	s.AddTool(mcp.NewTool("snoop", mcp.WithDescription("Look for the orchestrator's secrets")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := snoopReport{UID: os.Getuid()}
			leaks := func(b []byte) bool {
				return bytes.Contains(b, []byte("GUILDS_ENCRYPTION_KEY=")) || bytes.Contains(b, []byte("DATABASE_URL=")) ||
					bytes.Contains(b, []byte("dummy-encryption-key")) || bytes.Contains(b, []byte("dummy-db-password"))
			}
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", os.Getppid()))
			r.ParentReadable = err == nil
			if err != nil {
				r.ParentErr = err.Error()
			}
			r.ParentSecrets = leaks(b)
			r.OwnSecrets = leaks([]byte(strings.Join(os.Environ(), "\x00")))
			out, _ := json.Marshal(r)
			return mcp.NewToolResultText(string(out)), nil
		})
}

// runStdioParent is the orchestrator process: GUILDS_TEST_DB names the
// database, the argument after stdioParentArg the connection.
func runStdioParent(args []string) int {
	id := args[len(args)-1]
	// As cmd/guilds does first thing.
	if err := process.NonDumpable(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ctx := context.Background()
	db, err := pgxpool.New(ctx, os.Getenv("GUILDS_TEST_DB"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	p := mcppool.New(mcppool.Options{DB: db})
	defer p.Close()
	out, err := p.Call(ctx, id, "snoop", nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(out)
	return 0
}

// A stdio server the platform runs cannot read the orchestrator's secrets:
// not in its own environment, and (the orchestrator being root) not through
// /proc/<parent>/environ, since it runs as another user.
func TestStdioServerCannotReadTheOrchestratorsSecrets(t *testing.T) {
	dbURL := testdb.URL(t)
	db, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	cfg, _ := json.Marshal(map[string]any{"command": peerCommand(t), "args": []string{stdioPeerArg}})
	id := addServerConnection(t, db, "snoopy", "stdio", "", "none", string(cfg))

	cmd := exec.Command(os.Args[0], stdioParentArg, id)
	cmd.Env = append(os.Environ(), "GUILDS_TEST_DB="+dbURL,
		"GUILDS_ENCRYPTION_KEY="+dummyEncryptionKey, "DATABASE_URL="+dummyDatabaseURL)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("orchestrator: %v: %s", err, stderr.String())
	}
	var r snoopReport
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		t.Fatalf("snoop answered %q: %v", out, err)
	}
	if r.OwnSecrets {
		t.Fatalf("the stdio server's environment holds a platform secret: %+v", r)
	}
	if os.Geteuid() != 0 {
		t.Skipf("not root: the server runs as the orchestrator's user and can read /proc/<parent>/environ (readable=%v); only its own environment was checked", r.ParentReadable)
	}
	if r.UID != int(mcppool.StdioUID) {
		t.Fatalf("the stdio server runs as uid %d, want %d", r.UID, mcppool.StdioUID)
	}
	if r.ParentReadable || r.ParentSecrets {
		t.Fatalf("the stdio server read the orchestrator's environment: %+v", r)
	}
}

// imageUID is the user the shipped image and the Helm chart run the platform as.
const imageUID = 10001

// Where the platform does not run as root (the shipped image, the Helm
// chart), a stdio server runs as the orchestrator's own user; the
// orchestrator being non-dumpable, it still cannot read
// /proc/<parent>/environ, where the platform's secrets sit from the start.
func TestNonRootStdioServerCannotReadTheOrchestratorsEnvironment(t *testing.T) {
	dbURL := testdb.URL(t)
	db, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	peer := peerCommand(t)
	cfg, _ := json.Marshal(map[string]any{"command": peer, "args": []string{stdioPeerArg}})
	id := addServerConnection(t, db, "snoopy", "stdio", "", "none", string(cfg))

	cmd := exec.Command(peer, stdioParentArg, id)
	cmd.Dir = "/"
	cmd.Env = append(os.Environ(), "GUILDS_TEST_DB="+dbURL,
		"GUILDS_ENCRYPTION_KEY="+dummyEncryptionKey, "DATABASE_URL="+dummyDatabaseURL)
	if os.Geteuid() == 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: imageUID, Gid: imageUID}}
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("orchestrator: %v: %s", err, stderr.String())
	}
	var r snoopReport
	if err := json.Unmarshal(bytes.TrimSpace(out), &r); err != nil {
		t.Fatalf("snoop answered %q: %v", out, err)
	}
	if r.UID == 0 || r.UID == int(mcppool.StdioUID) {
		t.Fatalf("the stdio server runs as uid %d: this test is about a non-root orchestrator", r.UID)
	}
	if r.OwnSecrets || r.ParentReadable || r.ParentSecrets {
		t.Fatalf("a stdio server of a non-root orchestrator read its environment: %+v", r)
	}
}
