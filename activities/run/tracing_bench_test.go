package run_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	sdkworker "go.temporal.io/sdk/worker"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/telemetry"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

// tracePeerEnv makes the test binary serve BenchmarkToolTracingCost's peer
// (the MCP server and an OTLP sink on one loopback port) and print its URL,
// instead of running tests: the benchmark runs it as a child process, so
// only the platform's CPU is in the process's rusage.
const tracePeerEnv = "GUILDS_RUN_TRACING_PEER"

// traceCredential is the login's bearer credential; the MCP server quotes
// it in its result (a leaky remote), so the redaction has work to do.
const traceCredential = "sk-bench-trace-credential-41b7e0c2d9"

func init() {
	if os.Getenv(tracePeerEnv) == "1" {
		serveTracePeer()
		os.Exit(0)
	}
}

func serveTracePeer() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	s := mcpserver.NewMCPServer("notion", "1.0.0", mcpserver.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("lookup", mcp.WithString("query", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("page for " + req.GetString("query", "") + "; authorized with Bearer " + traceCredential), nil
		})
	h := mcpserver.NewStreamableHTTPServer(s)
	mux := http.NewServeMux()
	mux.Handle("/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+traceCredential {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // a collector that reads nothing: the export is the platform's cost
		w.Header().Set("Content-Type", "application/x-protobuf")
	})
	fmt.Println("http://" + ln.Addr().String())
	_ = http.Serve(ln, mux) //nolint:gosec // G114: a benchmark's loopback peer
}

// startTracePeer runs serveTracePeer in a child process and returns its URL.
func startTracePeer(b *testing.B) string {
	cmd := exec.Command(os.Args[0], "-test.run=^$") //nolint:gosec // G204: the test binary itself
	cmd.Env = append(os.Environ(), tracePeerEnv+"=1")
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
		b.Fatalf("trace peer: %q %v", line, err)
	}
	return strings.TrimSpace(line)
}

// traceCreds is the login's credential source, as the connector engine would be.
type traceCreds struct{}

func (traceCreds) Token(context.Context, uuid.UUID) (connectors.Credential, error) {
	return connectors.Credential{AccessToken: traceCredential}, nil
}
func (traceCreds) Refresh(context.Context, uuid.UUID) (connectors.Credential, error) {
	return connectors.Credential{AccessToken: traceCredential}, nil
}
func (traceCreds) MarkRejected(context.Context, uuid.UUID, string) error { return nil }

type traceSecrets []string

func (s traceSecrets) RunSecrets(context.Context, string) ([]string, error) { return s, nil }

// traceOfferer offers the connection's lookup tool as notion_lookup, as
// internal/grants would (without its bindings: the call-time re-check of the
// grants, GrantsOfferer.Current, is not part of this benchmark).
type traceOfferer struct{ connectionID string }

func (o traceOfferer) Offered(context.Context, store.DB, string, string) (runact.Offer, error) {
	schema := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`)
	shaped, _, err := tools.Shape(schema)
	if err != nil {
		return runact.Offer{}, err
	}
	return runact.Offer{Tools: []runact.OfferedTool{{Name: "notion_lookup", Kind: "mcp", Description: "Look a page up",
		Schema: schema, ShapedSchema: shaped, ConnectionID: o.connectionID, ServerSlug: "notion", RemoteName: "lookup",
		Class: tools.ClassMCP}}}, nil
}

// traceRun seeds an agent with an MCP login on the peer at url, starts a run
// and takes its snapshot, and returns the run's id and the activities.
func traceRun(b *testing.B, db *pgxpool.Pool, url string) (string, *runact.Activities) {
	ctx := context.Background()
	var org, guild, agent, sid string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org); err != nil {
		b.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, org).Scan(&guild); err != nil {
		b.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, model, prompt) VALUES ($1, 'scout', 'openrouter/test-model', 'Test.') RETURNING id`,
		guild).Scan(&agent); err != nil {
		b.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
		VALUES ('notion-trace', 'notion-trace', 'http', $1, 'oauth', '{}') RETURNING id`, url).Scan(&sid); err != nil {
		b.Fatal(err)
	}
	conn := connectionstest.InsertAs(b, db, sid, "organisation", org, connstore.StatusConnected)
	quiet := slog.New(slog.DiscardHandler)
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: traceCreds{}, Log: quiet})
	b.Cleanup(pool.Close)
	acts := runact.New(runact.Deps{DB: db, Tools: tools.NewRegistry(tools.WithLogger(quiet)), Offerer: traceOfferer{connectionID: conn},
		MCP: pool, Secrets: traceSecrets{traceCredential}, Log: quiet, Heartbeat: time.Second})
	r, err := runs.Create(ctx, db, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "direct",
		Model: "openrouter/test-model", Budget: 1 << 20, Message: "look the roadmap up"})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := acts.Snapshot(ctx, runact.SnapshotInput{RunID: r.ID}); err != nil {
		b.Fatal(err)
	}
	return r.ID, acts
}

// traceChunk is how many tool calls BenchmarkToolTracingCost makes before it
// turns tracing on or off (two or three spans a call: under one export batch
// of 512, and the on chunk's spans are flushed before it ends).
const traceChunk = 128

// BenchmarkToolTracingCost is the tool activity (runact.Activities.Tool) for
// a remote MCP tool, tracing off vs on, measured in turns within one loop:
// the stored-call check, run and snapshot load, the redaction set, the call
// through internal/remote and the session pool (tools/call over Streamable
// HTTP, traceparent in _meta), the stamping, the call row and its message in
// PostgreSQL, and the execute_tool and tools/call spans. The MCP server and
// the OTLP/HTTP collector run in a child process; PostgreSQL is its own
// process too, so the CPU is the platform's (getrusage of this process).
//
// Chunks of traceChunk calls alternate between off (no-op provider) and on
// (every span sampled and exported, the chunk flushed before it ends), so a
// load that comes and goes falls on both settings alike.
//
// via=direct calls the activity method; via=testsuite runs it as a Temporal
// activity in the SDK's TestActivityEnvironment (payload conversion, the
// activity context and heartbeats), with tracing on also through the
// Temporal OpenTelemetry interceptor, which adds its RunActivity:tool span
// as a worker does.
//
// It reports per call, for each setting: wall ns, CPU ns, allocations and
// bytes, and the CPU and wall overheads of on over off.
func BenchmarkToolTracingCost(b *testing.B) {
	db := testdb.New(b)
	peer := startTracePeer(b)
	ctx := context.Background()
	cfg, err := telemetry.ConfigFromEnv(func(k string) string {
		return map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": peer}[k]
	})
	if err != nil {
		b.Fatal(err)
	}
	tel, err := telemetry.Setup(ctx, cfg, "bench")
	if err != nil {
		b.Fatal(err)
	}
	provider, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider)
	if !ok {
		b.Fatal("Setup installed no SDK provider")
	}
	b.Cleanup(func() { telemetry.Reset(); _ = tel.Shutdown(ctx) })
	ic, err := tel.TemporalInterceptor()
	if err != nil || ic == nil {
		b.Fatalf("temporal interceptor: %v", err)
	}
	telemetry.Reset()

	runID, acts := traceRun(b, db, peer)
	seq := 1 // the opening message's; every call takes the next
	for _, via := range []string{"direct", "testsuite"} {
		b.Run("via="+via, func(b *testing.B) {
			var call [2]func(runact.ToolInput) (runact.ToolOutput, error)
			switch via {
			case "direct":
				call[0] = func(in runact.ToolInput) (runact.ToolOutput, error) { return acts.Tool(ctx, in) }
				call[1] = call[0]
			case "testsuite":
				var suite testsuite.WorkflowTestSuite
				suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
				for i, opts := range []sdkworker.Options{{}, {Interceptors: []interceptor.WorkerInterceptor{ic}}} {
					env := suite.NewTestActivityEnvironment()
					env.SetWorkerOptions(opts)
					env.RegisterActivityWithOptions(acts.Tool, activity.RegisterOptions{Name: runact.ToolName})
					call[i] = func(in runact.ToolInput) (runact.ToolOutput, error) {
						var out runact.ToolOutput
						v, err := env.ExecuteActivity(runact.ToolName, in)
						if err == nil {
							err = v.Get(&out)
						}
						return out, err
					}
				}
			}
			measureTracing(b, runID, &seq, provider, call)
		})
	}
}

// measureTracing makes b.N calls of the run's notion_lookup, in chunks of
// traceChunk that alternate between tracing off (call[0]) and on (call[1],
// provider installed), and reports each setting's figures per call.
func measureTracing(b *testing.B, runID string, seq *int, provider *sdktrace.TracerProvider,
	call [2]func(runact.ToolInput) (runact.ToolOutput, error)) {
	ctx := context.Background()
	const off, on = 0, 1
	var (
		cpu, wall           [2]time.Duration
		mallocs, allocBytes [2]uint64
		calls               [2]uint64
		ms                  runtime.MemStats
	)
	mode := off
	telemetry.Reset()
	b.ReportAllocs()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	startMallocs, startBytes, startCPU, startWall := ms.Mallocs, ms.TotalAlloc, traceCPU(), time.Now()
	turn := func() { // ends the chunk of mode, starts one of the other
		if mode == on {
			_ = provider.ForceFlush(ctx)
		}
		cpu[mode] += traceCPU() - startCPU
		wall[mode] += time.Since(startWall)
		runtime.ReadMemStats(&ms)
		mallocs[mode] += ms.Mallocs - startMallocs
		allocBytes[mode] += ms.TotalAlloc - startBytes
		mode = 1 - mode
		if mode == on {
			telemetry.Install(provider)
		} else {
			telemetry.Reset()
		}
		startMallocs, startBytes, startCPU, startWall = ms.Mallocs, ms.TotalAlloc, traceCPU(), time.Now()
	}
	i := 0
	for b.Loop() {
		if i > 0 && i%traceChunk == 0 {
			turn()
		}
		i++
		calls[mode]++
		*seq++
		out, err := call[mode](runact.ToolInput{RunID: runID, Seq: *seq, CallID: "call_" + strconv.Itoa(*seq),
			Name: "notion_lookup", Arguments: `{"query":"roadmap"}`, Remaining: 1000})
		if err != nil {
			b.Fatal(err)
		}
		if out.Outcome != runs.OutcomeOK || !strings.Contains(out.Result, "page for roadmap") || strings.Contains(out.Result, traceCredential) {
			b.Fatalf("call %d: %s %q", *seq, out.Outcome, out.Result)
		}
	}
	turn()
	telemetry.Reset()
	if calls[off] == 0 || calls[on] == 0 {
		b.Logf("%d calls: too few for both settings (use -benchtime %dx or more)", b.N, 2*traceChunk)
		return
	}
	per := func(v [2]float64, m int) float64 { return v[m] / float64(calls[m]) }
	cpuNs := [2]float64{float64(cpu[off].Nanoseconds()), float64(cpu[on].Nanoseconds())}
	wallNs := [2]float64{float64(wall[off].Nanoseconds()), float64(wall[on].Nanoseconds())}
	b.ReportMetric(per(wallNs, off), "off-ns/op")
	b.ReportMetric(per(wallNs, on), "on-ns/op")
	b.ReportMetric(per(cpuNs, off), "off-cpu-ns/op")
	b.ReportMetric(per(cpuNs, on), "on-cpu-ns/op")
	b.ReportMetric(100*(per(cpuNs, on)-per(cpuNs, off))/per(cpuNs, off), "overhead-%")
	b.ReportMetric(100*(per(wallNs, on)-per(wallNs, off))/per(wallNs, off), "wall-overhead-%")
	b.ReportMetric(float64(mallocs[off])/float64(calls[off]), "off-allocs/op")
	b.ReportMetric(float64(mallocs[on])/float64(calls[on]), "on-allocs/op")
	b.ReportMetric(float64(allocBytes[off])/float64(calls[off]), "off-B/op")
	b.ReportMetric(float64(allocBytes[on])/float64(calls[on]), "on-B/op")
}

// traceCPU is the process's CPU time so far (user and system, every goroutine).
func traceCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
