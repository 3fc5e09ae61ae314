package telemetry_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

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
