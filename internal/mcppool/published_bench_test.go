package mcppool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testproc"
)

// The issue-29 figures on the published MCP servers of the e2e suite
// (e2e/mcpservers, `make mcp-servers`), recorded in docs/benchmarks.md:
//
//	go test ./internal/mcppool/ -run '^$' -bench 'BenchmarkPublished' -benchtime 5x -count 3
//
// Without node or the installed servers they are skipped.

// publishedSuite is where the e2e suite's servers are installed.
type publishedSuite struct{ node, dir string }

func needPublished(b *testing.B) publishedSuite {
	b.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		b.Skip("node is not installed")
	}
	dir, err := filepath.Abs("../../e2e/mcpservers")
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
		b.Skip("the published MCP servers are not installed: make mcp-servers")
	}
	return publishedSuite{node: node, dir: dir}
}

func (s publishedSuite) js(pkg, rel string) string {
	return filepath.Join(s.dir, "node_modules", pkg, rel)
}

// listen starts a published server that serves HTTP on port and returns its
// MCP endpoint once it says it listens.
func (s publishedSuite) listen(b *testing.B, port int, env []string, args ...string) string {
	b.Helper()
	cmd := exec.Command(s.node, args...) //nolint:gosec // G204: a pinned package's entry point
	cmd.Env = append(os.Environ(), env...)
	testproc.Start(b, cmd, "listening on ")
	return fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
}

func (s publishedSuite) everythingHTTP(b *testing.B) string {
	port := freeTCPPort(b)
	return s.listen(b, port, []string{"PORT=" + strconv.Itoa(port)}, s.js("@modelcontextprotocol/server-everything", "dist/index.js"), "streamableHttp")
}

func (s publishedSuite) playwright(b *testing.B) string {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		b.Skip("chromium is not installed: Playwright's server drives it")
	}
	port := freeTCPPort(b)
	return s.listen(b, port, nil, s.js("@playwright/mcp", "cli.js"), "--headless", "--browser", "chromium",
		"--executable-path", chromium, "--no-sandbox", "--isolated", "--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--allowed-hosts", "127.0.0.1:"+strconv.Itoa(port), "--output-dir", b.TempDir())
}

var publishedRows atomic.Int64

// publishedConnection adds a no-login catalog row (a fresh slug each time:
// a benchmark function may run more than once) and its login.
func publishedConnection(b *testing.B, db *pgxpool.Pool, slug, transport, url string, config map[string]any) string {
	b.Helper()
	return everythingConnection(b, db, fmt.Sprintf("%s%d", slug, publishedRows.Add(1)), transport, url, config)
}

func freeTCPPort(b *testing.B) int {
	b.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

func noLogins() *creds { return &creds{tokens: map[uuid.UUID][]string{}} }

// BenchmarkPublishedFirstListing times what turning a published server On
// costs the pool: a new session (a stdio server started, as the stdio user
// when root), the handshake, tools/list and the listing stored. The HTTP
// servers are already running, as in the e2e suite.
func BenchmarkPublishedFirstListing(b *testing.B) {
	s := needPublished(b)
	db := testdb.New(b)
	shared, err := os.MkdirTemp("", "guilds-bench-files-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = os.RemoveAll(shared) })
	if err := os.Chmod(shared, 0o777); err != nil { //nolint:gosec // G302: the stdio server runs as nobody and must enter it
		b.Fatal(err)
	}
	stdio := func(js string, args ...string) map[string]any {
		return map[string]any{"command": s.node, "args": append([]string{js}, args...)}
	}
	for _, srv := range []struct {
		slug, transport, url string
		config               map[string]any
	}{
		{"files", "stdio", "", stdio(s.js("@modelcontextprotocol/server-filesystem", "dist/index.js"), shared)},
		{"thinking", "stdio", "", stdio(s.js("@modelcontextprotocol/server-sequential-thinking", "dist/index.js"))},
		{"memory", "stdio", "", stdio(s.js("@modelcontextprotocol/server-memory", "dist/index.js"))},
		{"everything", "stdio", "", stdio(s.js("@modelcontextprotocol/server-everything", "dist/index.js"))},
		{"notion", "stdio", "", stdio(s.js("@notionhq/notion-mcp-server", "bin/cli.mjs"))},
		{"everythinghttp", "http", s.everythingHTTP(b), map[string]any{}},
		{"browser", "http", s.playwright(b), map[string]any{}},
	} {
		b.Run(srv.slug, func(b *testing.B) {
			id := publishedConnection(b, db, srv.slug, srv.transport, srv.url, srv.config)
			b.ReportAllocs()
			for b.Loop() {
				p := mcppool.New(mcppool.Options{DB: db, Credentials: noLogins()})
				listed, err := p.Sync(context.Background(), id)
				p.Close()
				if err != nil || len(listed) == 0 {
					b.Fatalf("%s: %d tools, %v", srv.slug, len(listed), err)
				}
			}
		})
	}
}

// BenchmarkPublishedCall compares a tools/call through the pool with the
// MCP project's TypeScript client (e2e/mcpservers/refcall.mjs) on the same
// server: server-everything's echo over Streamable HTTP (one process, both
// clients) and over stdio (each client starts its own). The TypeScript
// figure is the client's own loop, timed in node, process start excluded.
func BenchmarkPublishedCall(b *testing.B) {
	s := needPublished(b)
	db := testdb.New(b)
	evJS := s.js("@modelcontextprotocol/server-everything", "dist/index.js")
	args := `{"message":"hello from the benchmark"}`
	for _, srv := range []struct {
		name, transport, url string
		config               map[string]any
		ref                  []string
	}{
		{"http", "http", s.everythingHTTP(b), map[string]any{}, nil},
		{"stdio", "stdio", "", map[string]any{"command": s.node, "args": []string{evJS}}, []string{"stdio", s.node, evJS}},
	} {
		if srv.ref == nil {
			srv.ref = []string{"http", srv.url}
		}
		b.Run(srv.name+"/pool", func(b *testing.B) {
			id := publishedConnection(b, db, "everything"+srv.name, srv.transport, srv.url, srv.config)
			p := mcppool.New(mcppool.Options{DB: db, Credentials: noLogins()})
			b.Cleanup(p.Close)
			ctx := context.Background()
			if _, err := p.Sync(ctx, id); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if out, err := p.Call(ctx, id, "echo", json.RawMessage(args)); err != nil || out != "Echo: hello from the benchmark" {
					b.Fatalf("%q, %v", out, err)
				}
			}
		})
		b.Run(srv.name+"/ts-sdk", func(b *testing.B) {
			cmd := exec.Command(s.node, append([]string{filepath.Join(s.dir, "refcall.mjs"), strconv.Itoa(b.N), "echo", args}, srv.ref...)...) //nolint:gosec // G204: the test's own script
			cmd.Stderr = os.Stderr
			out, err := cmd.Output()
			if err != nil {
				b.Fatalf("refcall.mjs: %v", err)
			}
			var r struct {
				Calls int    `json:"calls"`
				NS    string `json:"ns"`
			}
			if err := json.Unmarshal(out, &r); err != nil || r.Calls != b.N {
				b.Fatalf("refcall.mjs printed %q", out)
			}
			ns, perr := strconv.ParseFloat(r.NS, 64)
			if perr != nil {
				b.Fatal(perr)
			}
			b.ReportMetric(ns/float64(b.N), "ns/op")
		})
	}
}
