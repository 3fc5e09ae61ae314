package mcppool_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// memoryPeerEnv makes TestMemoryPeer serve instead of skipping: the
// benchmark below runs the MCP server in a child process, so that only the
// pool's side of each session counts in this process's memory.
const memoryPeerEnv = "GUILDS_MCPPOOL_MEMORY_PEER"

// TestMemoryPeer is the child process of BenchmarkSessionMemory: an mcp-go
// Streamable HTTP server (stateful, the handshake era) listening on as many
// loopback addresses as the environment asks for, so that sessions can each
// have a host of their own as they do in production. It prints its
// addresses and serves until its standard input closes.
func TestMemoryPeer(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(memoryPeerEnv))
	if n == 0 {
		t.Skip("the child process of BenchmarkSessionMemory")
	}
	h := server.NewStreamableHTTPServer(newMCP(), server.WithStateful(true))
	var addrs []string
	for i := range n {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.%d.%d:0", 1+i/250, 1+i%250))
		if err != nil {
			t.Fatal(err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(l) }()
		addrs = append(addrs, l.Addr().String())
	}
	fmt.Println("PEER " + strings.Join(addrs, " "))
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// startMemoryPeer starts the child server with n addresses.
func startMemoryPeer(b *testing.B, n int) []string {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryPeer$", "-test.v")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", memoryPeerEnv, n))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = stdin.Close()
		if err := cmd.Wait(); err != nil {
			b.Logf("memory peer: %v", err)
		}
	})
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "PEER "); ok {
			go func() { _, _ = io.Copy(io.Discard, stdout) }()
			return strings.Fields(rest)
		}
	}
	b.Fatalf("the memory peer did not start: %v", sc.Err())
	return nil
}

// memStats is this process's memory after two collections.
type memStats struct {
	heap, rss  int64 // heap in use (runtime), resident set (kernel)
	goroutines int
}

func readMem(b *testing.B) memStats {
	b.Helper()
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	var rss int64
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			rss = kb << 10
		}
	}
	return memStats{heap: int64(ms.HeapInuse), rss: rss, goroutines: runtime.NumGoroutine()}
}

// BenchmarkSessionMemory measures what an open MCP session costs a worker:
// the pool opens one session per connection (docs/adr/0601), so N
// connections that have each made a tools/call hold N sessions. The server
// runs in a child process. hosts=one puts every session on one server
// address (what the session itself holds, the HTTP keep-alive connections
// being shared); hosts=own gives each session its own loopback address, as
// sessions to different remote servers are, so each also keeps its own idle
// connection, up to the transport's cap of 100 idle connections. Memory is
// read (after GC) with 0, 100 and 400 sessions open; reported per session
// for the first 100 (first-*) and for the next 300 (*), heap in use and
// resident memory, and goroutines. Run with -benchtime=1x.
func BenchmarkSessionMemory(b *testing.B) {
	for _, hosts := range []string{"one", "own"} {
		b.Run("hosts="+hosts, func(b *testing.B) {
			peers := 1
			if hosts == "own" {
				peers = memorySessions
			}
			addrs := startMemoryPeer(b, peers)
			for range b.N {
				sessionMemory(b, addrs)
			}
		})
	}
}

// memorySessions is the number of sessions BenchmarkSessionMemory opens;
// memory is read after the first memoryCheckpoint.
const (
	memorySessions   = 400
	memoryCheckpoint = 100
)

func sessionMemory(b *testing.B, addrs []string) {
	ctx := context.Background()
	db := testdb.New(b)
	cr := &creds{tokens: map[uuid.UUID][]string{}}
	ids := make([]string, memorySessions)
	for i := range ids {
		url := "http://" + addrs[i%len(addrs)] + "/mcp"
		ids[i] = addConnection(b, db, fmt.Sprintf("mem-%d", i), url, "oauth", `{}`)
		cr.tokens[uuid.MustParse(ids[i])] = []string{"a"}
	}
	// The worker's own client (workflows/connect): one transport for every
	// session, whose idle connections are capped at 100 in all and 2 per host.
	hc := mcpoauth.Policy{AllowLoopback: true}.Client(0)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: cr, HTTPClient: hc, SweepEvery: -1})
	defer p.Close()
	args := json.RawMessage(`{"text":"hello"}`)
	// One call first, so that what the pool and its clients set up once is
	// in the baseline rather than in the first session.
	warm := addConnection(b, db, "mem-warm", "http://"+addrs[0]+"/mcp", "oauth", `{}`)
	cr.tokens[uuid.MustParse(warm)] = []string{"a"}
	if _, err := p.Call(ctx, warm, "echo", args); err != nil {
		b.Fatal(err)
	}
	call := func(ids []string) {
		for _, id := range ids {
			if out, err := p.Call(ctx, id, "echo", args); err != nil || !strings.Contains(out, "echo: hello") {
				b.Fatalf("call: %q %v", out, err)
			}
		}
	}
	b.ResetTimer()
	m0 := readMem(b)
	call(ids[:memoryCheckpoint])
	m1 := readMem(b)
	call(ids[memoryCheckpoint:])
	m2 := readMem(b)
	b.StopTimer()
	per := func(from, to int64, n int) float64 { return float64(to-from) / float64(n) }
	first, rest := memoryCheckpoint, memorySessions-memoryCheckpoint
	b.ReportMetric(per(m0.heap, m1.heap, first), "first-heap-B/session")
	b.ReportMetric(per(m0.rss, m1.rss, first), "first-rss-B/session")
	b.ReportMetric(per(m1.heap, m2.heap, rest), "heap-B/session")
	b.ReportMetric(per(m1.rss, m2.rss, rest), "rss-B/session")
	b.ReportMetric(per(int64(m0.goroutines), int64(m2.goroutines), memorySessions), "goroutines/session")
	mib := func(v int64) string { return fmt.Sprintf("%.1f", float64(v)/(1<<20)) }
	b.Logf("0 / %d / %d sessions: heap in use %s / %s / %s MiB, RSS %s / %s / %s MiB, goroutines %d / %d / %d",
		memoryCheckpoint, memorySessions, mib(m0.heap), mib(m1.heap), mib(m2.heap), mib(m0.rss), mib(m1.rss), mib(m2.rss),
		m0.goroutines, m1.goroutines, m2.goroutines)
}
