package mcppool_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// stdioPeerArg makes the test binary an MCP stdio server instead of running
// the tests: the pool starts it as a platform-run server. An argument, not an
// environment variable: the pool hands a stdio server only an allow-list of
// the platform's environment.
const stdioPeerArg = "-guilds-stdio-peer"

// platformSecretEnv stands for the orchestrator's own secrets (database URL,
// encryption key): set in the test process, it must not reach the server.
const platformSecretEnv = "GUILDS_MCPPOOL_PLATFORM_SECRET"

func TestMain(m *testing.M) {
	if slices.Contains(os.Args[1:], stdioParentArg) {
		os.Exit(runStdioParent(os.Args[1:]))
	}
	if slices.Contains(os.Args[1:], stdioPeerArg) {
		if err := server.ServeStdio(stdioPeer()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	code := m.Run()
	if peerPath != "" {
		_ = os.RemoveAll(filepath.Dir(peerPath))
	}
	os.Exit(code)
}

// peerReport is what the stdio peer's whoami tool answers. The token it
// received is reported only as a digest, with where else it appears.
type peerReport struct {
	PID         int      `json:"pid"`
	Leaked      string   `json:"leaked"` // the platform secret, if it reached the server
	HasPath     bool     `json:"has_path"`
	Args        []string `json:"args"`
	MetaKeys    []string `json:"meta_keys"`
	TokenDigest string   `json:"token_sha256"`
	TokenInArgv bool     `json:"token_in_argv"`
	TokenInEnv  bool     `json:"token_in_env"`
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func stdioPeer() *server.MCPServer {
	s := newMCP()
	addSnoopTool(s)
	addOrderTool(s)
	s.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Say what this process received")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			r := peerReport{PID: os.Getpid(), Leaked: os.Getenv(platformSecretEnv), HasPath: os.Getenv("PATH") != "", Args: os.Args[1:]}
			var token string
			if m := req.Params.Meta; m != nil {
				for k := range m.AdditionalFields {
					// The stateless revision's own keys (protocol version,
					// client info) ride on every request; only others count.
					if !strings.HasPrefix(k, "io.modelcontextprotocol/") {
						r.MetaKeys = append(r.MetaKeys, k)
					}
				}
				token, _ = m.AdditionalFields[connectors.MetaTokenField].(string)
			}
			if token != "" {
				r.TokenDigest = digest(token)
				for _, a := range os.Args {
					r.TokenInArgv = r.TokenInArgv || strings.Contains(a, token)
				}
				for _, e := range os.Environ() {
					r.TokenInEnv = r.TokenInEnv || strings.Contains(e, token)
				}
			}
			b, _ := json.Marshal(r)
			return mcp.NewToolResultText(string(b)), nil
		})
	s.AddTool(mcp.NewTool("getenv", mcp.WithDescription("One variable of this process's environment"), mcp.WithString("name", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(os.Getenv(req.GetString("name", ""))), nil
		})
	return s
}

// stdioConnection adds a stdio catalog row that re-executes this test binary,
// and a login holding key.
func stdioConnection(t *testing.T, key string) (*mcppool.Pool, string) {
	t.Helper()
	t.Setenv(platformSecretEnv, "postgres://platform:secret@db/guilds")
	db := testdb.New(t)
	cfg, _ := json.Marshal(map[string]any{"command": peerCommand(t), "args": []string{stdioPeerArg}})
	id := addServerConnection(t, db, "localmcp", "stdio", "", "token", string(cfg))
	eng := newEngine(t, db, "localmcp")
	connectKey(t, eng, id, key)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver()})
	t.Cleanup(p.Close)
	return p, id
}

func whoami(t *testing.T, p *mcppool.Pool, id string) peerReport {
	t.Helper()
	out, err := p.Call(context.Background(), id, "whoami", nil)
	if err != nil {
		t.Fatal(err)
	}
	var r peerReport
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("whoami answered %q: %v", out, err)
	}
	return r
}

// reaped reports whether pid is gone: a zombie still accepts signal 0.
func reaped(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

func TestStdioListCallAndTokenChannel(t *testing.T) {
	const key = "stdio-key-7f3a91c2"
	ctx := context.Background()
	p, id := stdioConnection(t, key)

	tools, err := p.Sync(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{}
	for _, tl := range tools {
		names[tl.Name] = tl.RemoteName
	}
	if len(tools) != 7 || names["localmcp_pages_search"] != "pages.search" || names["localmcp_whoami"] != "whoami" {
		t.Fatalf("listed %v", names)
	}
	if out, err := p.Call(ctx, id, "echo", json.RawMessage(`{"text":"hi"}`)); err != nil || out != "echo: hi" {
		t.Fatalf("call = %q, %v", out, err)
	}
	if out, err := p.Call(ctx, id, "fail", nil); err != nil || out != "ERROR: quota exceeded" {
		t.Fatalf("erroring tool = %q, %v", out, err)
	}

	r := whoami(t, p, id)
	if len(r.Args) != 1 || r.Args[0] != stdioPeerArg {
		t.Fatalf("the peer was not started from the catalog row: %+v", r)
	}
	if r.Leaked != "" || !r.HasPath {
		t.Fatalf("the server must see PATH and none of the platform's own environment: %+v", r)
	}
	if r.TokenDigest != digest(key) || len(r.MetaKeys) != 1 || r.MetaKeys[0] != connectors.MetaTokenField {
		t.Fatalf("the token must arrive in _meta.%s alone: %+v", connectors.MetaTokenField, r)
	}
	if r.TokenInArgv || r.TokenInEnv {
		t.Fatalf("the token leaked outside _meta: %+v", r)
	}
	// The kernel's view of the process agrees.
	for _, f := range []string{"cmdline", "environ"} {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", r.PID, f))
		if err != nil {
			t.Logf("cannot read /proc/%d/%s: %v", r.PID, f, err)
			continue
		}
		if bytes.Contains(b, []byte(key)) {
			t.Fatalf("the token is in the process's %s", f)
		}
	}
	if again := whoami(t, p, id); again.PID != r.PID {
		t.Fatalf("a second call started a new process (%d → %d)", r.PID, again.PID)
	}

	p.Drop(id)
	if !reaped(r.PID) {
		t.Fatalf("process %d still exists after Drop (zombie or orphan)", r.PID)
	}
	// The next call starts a fresh process.
	if next := whoami(t, p, id); next.PID == r.PID || next.TokenDigest != digest(key) {
		t.Fatalf("after Drop: %+v", next)
	}
}

// A peer that died is re-started on the next call, and the dead one reaped.
func TestStdioDeadProcessIsRestartedAndReaped(t *testing.T) {
	p, id := stdioConnection(t, "stdio-key-0b5d")
	first := whoami(t, p, id)
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	second := whoami(t, p, id)
	if second.PID == first.PID {
		t.Fatal("the dead process answered")
	}
	if !reaped(first.PID) {
		t.Fatalf("the killed process %d was not reaped", first.PID)
	}
	p.Close()
	if !reaped(second.PID) {
		t.Fatalf("process %d still exists after Close", second.PID)
	}
}
