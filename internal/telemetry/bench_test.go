package telemetry_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/telemetry"
	"github.com/guilds/guilds/internal/testdb"
)

// BenchmarkToolCall is one remote tool call as the tool activity makes it
// (execute_tool span, the pool's tools/call over Streamable HTTP to a real
// MCP server on loopback, traceparent in _meta), with tracing off and on.
// On exports every span, sampled, over OTLP/HTTP to a loopback collector.
func BenchmarkToolCall(b *testing.B) {
	db := testdb.New(b)
	peer := newMCPPeer(b)
	conn := addConnection(b, db, peer.URL)
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: creds{}, Log: slog.New(slog.DiscardHandler)})
	b.Cleanup(pool.Close)
	args := json.RawMessage(`{"query":"roadmap"}`)
	if _, err := pool.Call(context.Background(), conn, "lookup", args); err != nil { // opens the session
		b.Fatal(err)
	}
	call := func(b *testing.B) {
		ctx := context.Background()
		defer reportCPU(b)()
		for b.Loop() {
			tctx, span := telemetry.StartToolCall(ctx, "run", "notion_lookup", "call_1")
			out, err := pool.Call(tctx, conn, "lookup", args)
			span.Content(string(args), out)
			span.End("mcp", "mcp", "ok")
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("tracing=off", func(b *testing.B) {
		b.ReportAllocs()
		telemetry.Reset()
		call(b)
	})
	b.Run("tracing=on", func(b *testing.B) {
		b.ReportAllocs()
		sink := newSink(b)
		cfg, err := telemetry.ConfigFromEnv(func(k string) string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": sink.URL}[k]
		})
		if err != nil {
			b.Fatal(err)
		}
		tel, err := telemetry.Setup(context.Background(), cfg, "bench")
		if err != nil {
			b.Fatal(err)
		}
		defer telemetry.Reset()
		call(b)
		b.StopTimer()
		if err := tel.Shutdown(context.Background()); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkTracingCost is BenchmarkToolCall's two settings measured in
// turns within one loop, with the MCP server and the collector in another
// process (as in production: what the server spends reading the larger
// _meta is not the platform's CPU): chunks of tracingChunk calls alternate between
// tracing off and on (every span sampled and exported, the chunk's spans
// flushed before it ends), and each setting's CPU and allocations are summed
// over its own chunks. A load that comes and goes on the machine then falls
// on both alike, which separate sub-benchmarks seconds apart cannot give.
// It reports per call off-cpu-ns, on-cpu-ns, overhead-% (on over off),
// meta-overhead-% (a third setting: off, but a caller's trace context goes
// in _meta) and the allocations of each.
func BenchmarkTracingCost(b *testing.B) {
	db := testdb.New(b)
	remote := startRemotePeer(b)
	conn := addConnection(b, db, remote)
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: creds{}, Log: slog.New(slog.DiscardHandler)})
	b.Cleanup(pool.Close)
	args := json.RawMessage(`{"query":"roadmap"}`)
	ctx := context.Background()
	if _, err := pool.Call(ctx, conn, "lookup", args); err != nil { // opens the session
		b.Fatal(err)
	}
	cfg, err := telemetry.ConfigFromEnv(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": remote}[k]
	})
	if err != nil {
		b.Fatal(err)
	}
	tel, err := telemetry.Setup(ctx, cfg, "bench")
	if err != nil {
		b.Fatal(err)
	}
	on, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider)
	if !ok {
		b.Fatal("Setup installed no SDK provider")
	}
	defer func() { _ = tel.Shutdown(ctx) }()
	defer telemetry.Reset()

	// Three settings: off, on, and off with a caller's trace context in
	// ctx, so that only the _meta trace context goes on the wire (what that
	// costs of the on-off difference, apart from the spans and their export).
	const off, on3, metaOnly = 0, 1, 2
	remoteCtx := trace.ContextWithRemoteSpanContext(ctx, trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled, Remote: true}))
	var cpu [3]time.Duration
	var mallocs, calls [3]uint64
	var ms runtime.MemStats
	mode := off
	telemetry.Reset()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	startMallocs, startCPU := ms.Mallocs, cpuTime()
	turn := func() { // ends the chunk of mode, starts one of the next
		if mode == on3 {
			_ = on.ForceFlush(ctx)
		}
		cpu[mode] += cpuTime() - startCPU
		runtime.ReadMemStats(&ms)
		mallocs[mode] += ms.Mallocs - startMallocs
		mode = (mode + 1) % 3
		if mode == on3 {
			telemetry.Install(on)
		} else {
			telemetry.Reset()
		}
		startMallocs, startCPU = ms.Mallocs, cpuTime()
	}
	i := 0
	for b.Loop() {
		if i > 0 && i%tracingChunk == 0 {
			turn()
		}
		i++
		calls[mode]++
		cctx := ctx
		if mode == metaOnly {
			cctx = remoteCtx
		}
		tctx, span := telemetry.StartToolCall(cctx, "run", "notion_lookup", "call_1")
		out, err := pool.Call(tctx, conn, "lookup", args)
		span.Content(string(args), out)
		span.End("mcp", "mcp", "ok")
		if err != nil {
			b.Fatal(err)
		}
	}
	turn()
	if calls[off] == 0 || calls[on3] == 0 || calls[metaOnly] == 0 {
		b.Logf("%d calls: too few for the three settings (use -benchtime %dx or more)", b.N, 3*tracingChunk)
		return
	}
	per := func(m int) float64 { return float64(cpu[m].Nanoseconds()) / float64(calls[m]) }
	b.ReportMetric(per(off), "off-cpu-ns/op")
	b.ReportMetric(per(on3), "on-cpu-ns/op")
	b.ReportMetric(100*(per(on3)-per(off))/per(off), "overhead-%")
	b.ReportMetric(100*(per(metaOnly)-per(off))/per(off), "meta-overhead-%")
	b.ReportMetric(float64(mallocs[off])/float64(calls[off]), "off-allocs/op")
	b.ReportMetric(float64(mallocs[on3])/float64(calls[on3]), "on-allocs/op")
	b.ReportMetric(float64(mallocs[metaOnly])/float64(calls[metaOnly]), "meta-allocs/op")
}

// remotePeerEnv makes the test binary serve the MCP peer and an OTLP sink
// (POST /v1/traces) on one loopback port, and print its URL, instead of
// running tests.
const remotePeerEnv = "GUILDS_TELEMETRY_REMOTE_PEER"

func serveRemotePeer() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	mux := http.NewServeMux()
	mux.Handle("/", (&mcpPeer{}).handler())
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	})
	fmt.Println("http://" + ln.Addr().String())
	_ = http.Serve(ln, mux) //nolint:gosec // G114: a benchmark's loopback peer
}

// startRemotePeer runs serveRemotePeer in a child process for the benchmark
// and returns its URL.
func startRemotePeer(b *testing.B) string {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), remotePeerEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "http://") {
		b.Fatalf("remote peer: %q %v", line, err)
	}
	return strings.TrimSpace(line)
}

// tracingChunk is how many calls BenchmarkTracingCost makes before it turns
// tracing on or off: a full export batch (512 spans) with tracing on.
const tracingChunk = 256

// BenchmarkSpans is what tracing adds to one remote tool call, alone: the
// execute_tool and tools/call spans, their metrics and the _meta trace
// context, with tracing off (no-op provider) and on (exported, sampled).
func BenchmarkSpans(b *testing.B) {
	spans := func(b *testing.B) {
		ctx := context.Background()
		defer reportCPU(b)()
		for b.Loop() {
			tctx, tool := telemetry.StartToolCall(ctx, "run", "notion_lookup", "call_1")
			mctx, req := telemetry.StartMCPRequest(tctx, "tools/call", "lookup")
			req.Session("notion", "http", "mcp-session-1", "2025-11-25")
			_ = telemetry.TraceMeta(mctx)
			req.End("")
			tool.End("mcp", "mcp", "ok")
		}
	}
	b.Run("tracing=off", func(b *testing.B) {
		b.ReportAllocs()
		telemetry.Reset()
		spans(b)
	})
	b.Run("tracing=on", func(b *testing.B) {
		b.ReportAllocs()
		sink := newSink(b)
		cfg, _ := telemetry.ConfigFromEnv(func(k string) string {
			return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": sink.URL}[k]
		})
		tel, err := telemetry.Setup(context.Background(), cfg, "bench")
		if err != nil {
			b.Fatal(err)
		}
		defer telemetry.Reset()
		spans(b)
		b.StopTimer()
		_ = tel.Shutdown(context.Background())
	})
}

// newSink is a collector that takes exports and reads nothing of them: a
// benchmark then times the platform's side of the export, not a decoder.
func newSink(b *testing.B) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(srv.Close)
	return srv
}

// reportCPU reports the process's CPU time per op (user and system, every
// goroutine: the MCP server, the exporter and the collector are in-process
// too). On a shared machine wall time swings with the other loads; the
// work done does not.
func reportCPU(b *testing.B) func() {
	start := cpuTime()
	return func() {
		if b.N > 0 {
			b.ReportMetric(float64((cpuTime()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		}
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
