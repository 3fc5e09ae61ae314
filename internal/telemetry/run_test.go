package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/telemetry"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/workflows/run"
)

func TestMain(m *testing.M) {
	if os.Getenv(remotePeerEnv) == "1" { // BenchmarkTracingCost's other process
		serveRemotePeer()
		return
	}
	os.Exit(testtemporal.Main(m))
}

// The MCP login's credential, the box's model key and a marker only the
// tool's raw result holds: no span attribute may carry any of them.
const (
	credential = "sk-trace-credential-5d1c0e9a77"
	boxKey     = "or-box-key-trace-0123456789"
	rawMarker  = "RAW-RESULT-7c4e19"
)

// ---- peers ----------------------------------------------------------------------

// mcpPeer is a real MCP server over Streamable HTTP behind a bearer check. Its
// lookup tool quotes the credential (a leaky remote); fail answers isError. It
// records the traceparent each call carried in _meta.
type mcpPeer struct {
	*httptest.Server
	mu           sync.Mutex
	traceparents []string
}

func newMCPPeer(t testing.TB) *mcpPeer {
	p := &mcpPeer{}
	p.Server = httptest.NewServer(p.handler())
	t.Cleanup(p.Close)
	return p
}

func (p *mcpPeer) handler() http.Handler {
	s := mcpserver.NewMCPServer("notion", "1.0.0", mcpserver.WithToolCapabilities(false))
	note := func(req mcp.CallToolRequest) {
		p.mu.Lock()
		defer p.mu.Unlock()
		tp := ""
		if req.Params.Meta != nil {
			tp, _ = req.Params.Meta.AdditionalFields["traceparent"].(string)
		}
		p.traceparents = append(p.traceparents, tp)
	}
	s.AddTool(mcp.NewTool("lookup", mcp.WithString("query", mcp.Required())), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		note(req)
		return mcp.NewToolResultText(rawMarker + " page for " + req.GetString("query", "") + "; authorized with Bearer " + credential), nil
	})
	s.AddTool(mcp.NewTool("fail"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		note(req)
		return mcp.NewToolResultError(rawMarker + " quota exceeded"), nil
	})
	h := mcpserver.NewStreamableHTTPServer(s)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+credential {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (p *mcpPeer) Traceparents() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.traceparents...)
}

// newModel is an OpenAI-compatible /chat/completions server: the first turn
// calls notion_lookup and notion_fail, the next one answers.
func newModel(t testing.TB) *httptest.Server {
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		turn := n
		n++
		mu.Unlock()
		msg := map[string]any{"role": "assistant", "content": "done"}
		finish := "stop"
		if turn == 0 {
			msg = map[string]any{"role": "assistant", "content": "", "tool_calls": []any{
				map[string]any{"id": "call_lookup", "type": "function", "function": map[string]any{"name": "notion_lookup", "arguments": `{"query":"roadmap"}`}},
				map[string]any{"id": "call_fail", "type": "function", "function": map[string]any{"name": "notion_fail", "arguments": `{}`}},
			}}
			finish = "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"id": "cmpl", "object": "chat.completion",
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]int{"prompt_tokens": 12, "completion_tokens": 7}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// ---- platform pieces ---------------------------------------------------------------

// creds is the login's credential source, as the connector engine would be.
type creds struct{}

func (creds) Token(context.Context, uuid.UUID) (connectors.Credential, error) {
	return connectors.Credential{AccessToken: credential}, nil
}
func (creds) Refresh(context.Context, uuid.UUID) (connectors.Credential, error) {
	return connectors.Credential{AccessToken: credential}, nil
}
func (creds) MarkRejected(context.Context, uuid.UUID, string) error { return nil }

type fixedSecrets []string

func (s fixedSecrets) RunSecrets(context.Context, string) ([]string, error) { return s, nil }

// offerer offers the connection's two tools, as internal/grants would.
type offerer struct{ connectionID string }

func (o offerer) Offered(context.Context, store.DB, string, string) (runact.Offer, error) {
	var off runact.Offer
	for _, name := range []string{"lookup", "fail"} {
		schema := json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"}}}`)
		shaped, _, err := tools.Shape(schema)
		if err != nil {
			return off, err
		}
		off.Tools = append(off.Tools, runact.OfferedTool{Name: "notion_" + name, Kind: "mcp", Description: name,
			Schema: schema, ShapedSchema: shaped, ConnectionID: o.connectionID, ServerSlug: "notion", RemoteName: name, Class: tools.ClassMCP})
	}
	return off, nil
}

func seedAgent(t testing.TB, db *pgxpool.Pool) string {
	t.Helper()
	ctx := context.Background()
	var org, guild, agent string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, org).Scan(&guild); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, model, prompt) VALUES ($1, 'scout', 'openrouter/test-model', 'Test.') RETURNING id`,
		guild).Scan(&agent); err != nil {
		t.Fatal(err)
	}
	return agent
}

func addConnection(t testing.TB, db *pgxpool.Pool, url string) string {
	t.Helper()
	var sid string
	if err := db.QueryRow(context.Background(), `INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
VALUES ('notion-trace', 'notion-trace', 'http', $1, 'oauth', '{}') RETURNING id`, url).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	return connectionstest.InsertAs(t, db, sid, "organisation", uuid.NewString(), connstore.StatusConnected)
}

// tracedRun runs one run end to end on the Temporal dev server with tracing
// exported to rec, and returns the peer that served its MCP calls.
func tracedRun(t *testing.T, rec *receiver, extraEnv map[string]string) *mcpPeer {
	t.Helper()
	ctx := context.Background()
	env := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rec.URL, "OTEL_SERVICE_NAME": "guilds-test", "OTEL_BSP_SCHEDULE_DELAY": "50"}
	for k, v := range extraEnv {
		env[k] = v
	}
	cfg, err := telemetry.ConfigFromEnv(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	tel, err := telemetry.Setup(ctx, cfg, "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(telemetry.Reset)
	ic, err := tel.TemporalInterceptor()
	if err != nil || ic == nil {
		t.Fatalf("temporal interceptor: %v", err)
	}
	quiet := slog.New(slog.DiscardHandler)
	c, err := client.Dial(client.Options{HostPort: testtemporal.Address(t), Namespace: "default",
		Interceptors: []interceptor.ClientInterceptor{ic}, Logger: sdklog.NewStructuredLogger(quiet)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	db := testdb.New(t)
	agent := seedAgent(t, db)
	peer := newMCPPeer(t)
	conn := addConnection(t, db, peer.URL)
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: creds{}, Log: quiet})
	defer pool.Close()
	modelSrv := newModel(t)
	res := &models.Resolver{Integrations: integrations.New(func(k string) string {
		if k == "OPENROUTER_API_KEY" {
			return boxKey
		}
		return ""
	}), BaseURLs: map[string]string{models.OpenRouter: modelSrv.URL}}
	acts := runact.New(runact.Deps{DB: db, Tools: tools.NewRegistry(), Offerer: offerer{connectionID: conn}, MCP: pool,
		Secrets: fixedSecrets{credential, boxKey}, Models: res, Log: quiet, Heartbeat: time.Second})
	queue := testtemporal.TaskQueue(t)
	w := sdkworker.New(c, queue, sdkworker.Options{}) // the client's interceptor traces the worker too
	run.Register(w, acts)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	id, err := run.Start(ctx, c, db, run.Input{AgentID: agent, Message: "look the roadmap up", Budget: 5, Models: res, TaskQueue: queue})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var out run.Result
	if err := c.GetWorkflow(wctx, run.WorkflowID(id), "").Get(wctx, &out); err != nil {
		t.Fatalf("run: %v", err)
	}
	w.Stop()
	if err := tel.Shutdown(ctx); err != nil { // flushes every span to rec
		t.Fatal(err)
	}
	if bad := rec.Bad(); len(bad) > 0 {
		t.Fatalf("the receiver refused exports: %v", bad)
	}
	return peer
}

// ---- tests -------------------------------------------------------------------------

// A run's spans form one tree in one trace: Temporal's run workflow, its
// model turn (chat) and tool call (execute_tool) under their activities, and
// the MCP request (tools/call) under the tool call, whose trace context the
// server received in _meta. No attribute holds the credential, the model key
// or the raw result.
func TestRunSpanTree(t *testing.T) {
	if testing.Short() {
		t.Skip("uses the Temporal dev server")
	}
	rec := newReceiver(t)
	peer := tracedRun(t, rec, nil)
	spans := rec.Spans()
	byID := map[string]span{}
	for _, s := range spans {
		byID[s.SpanID] = s
	}
	find := func(name string) span {
		t.Helper()
		for _, s := range spans {
			if s.Name == name {
				return s
			}
		}
		t.Fatalf("no span %q among %s", name, names(spans))
		return span{}
	}
	hasAncestor := func(s span, ancestor string) bool {
		for p, ok := byID[s.Parent]; ok; p, ok = byID[p.Parent] {
			if p.SpanID == ancestor {
				return true
			}
		}
		return false
	}
	wf := find("RunWorkflow:" + run.WorkflowName)
	chat := find("chat test-model")
	lookup := find("execute_tool notion_lookup")
	fail := find("execute_tool notion_fail")
	lookupMCP := find("tools/call lookup")
	failMCP := find("tools/call fail")

	for _, s := range []span{chat, lookup, fail, lookupMCP, failMCP} {
		if s.TraceID != wf.TraceID {
			t.Errorf("%s is in trace %s, the run in %s", s.Name, s.TraceID, wf.TraceID)
		}
		if !hasAncestor(s, wf.SpanID) {
			t.Errorf("%s does not descend from the run's workflow span", s.Name)
		}
	}
	if p := byID[chat.Parent]; p.Name != "RunActivity:"+runact.ModelName {
		t.Errorf("chat's parent is %q", p.Name)
	}
	if p := byID[lookup.Parent]; p.Name != "RunActivity:"+runact.ToolName {
		t.Errorf("execute_tool's parent is %q", p.Name)
	}
	if lookupMCP.Parent != lookup.SpanID || failMCP.Parent != fail.SpanID {
		t.Errorf("a tools/call span is not the child of its execute_tool span")
	}
	want := map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "notion_lookup",
		"gen_ai.tool.call.id": "call_lookup", "gen_ai.tool.type": "extension", "guilds.tool.outcome": "ok"}
	for k, v := range want {
		if lookup.Attrs[k] != v {
			t.Errorf("execute_tool %s = %q, want %q", k, lookup.Attrs[k], v)
		}
	}
	// A session id only where the revision has sessions (the stateless
	// 2026-07-28 one has none).
	version := lookupMCP.Attrs["mcp.protocol.version"]
	if lookupMCP.Kind != "SPAN_KIND_CLIENT" || lookupMCP.Attrs["mcp.method.name"] != "tools/call" || lookupMCP.Attrs["network.transport"] != "tcp" ||
		version == "" || (version < "2026-07-28") != (lookupMCP.Attrs["mcp.session.id"] != "") || lookupMCP.Attrs["error.type"] != "" {
		t.Errorf("tools/call lookup: kind %s, attributes %v", lookupMCP.Kind, lookupMCP.Attrs)
	}
	if failMCP.Attrs["error.type"] != "tool_error" || fail.Attrs["guilds.tool.outcome"] != "error" {
		t.Errorf("an isError result: tools/call %v, execute_tool %v", failMCP.Attrs, fail.Attrs)
	}
	if chat.Attrs["gen_ai.usage.input_tokens"] == "" || chat.Attrs["gen_ai.operation.name"] != "chat" {
		t.Errorf("chat attributes %v", chat.Attrs)
	}
	// The server got the MCP request span's context: same trace, that span as parent.
	got := peer.Traceparents()
	wantTP := map[string]bool{fmt.Sprintf("00-%s-%s-01", wf.TraceID, lookupMCP.SpanID): true, fmt.Sprintf("00-%s-%s-01", wf.TraceID, failMCP.SpanID): true}
	if len(got) != 2 || !wantTP[got[0]] || !wantTP[got[1]] || got[0] == got[1] {
		t.Errorf("traceparents in _meta %v, want those of %v", got, wantTP)
	}
	for _, s := range spans {
		for k, v := range s.Attrs {
			for _, secret := range []string{credential, boxKey, rawMarker, "roadmap"} {
				if strings.Contains(v, secret) {
					t.Errorf("span %s attribute %s holds %q", s.Name, k, secret)
				}
			}
		}
		if _, ok := s.Attrs["gen_ai.tool.call.result"]; ok {
			t.Errorf("span %s records a result with capture off", s.Name)
		}
	}
}

// With GUILDS_OTEL_CAPTURE_CONTENT=1 the tool call's span holds its
// arguments and result, redacted by the run's set: the result is there, the
// credential the server quoted is not.
func TestRunSpanContentCapture(t *testing.T) {
	if testing.Short() {
		t.Skip("uses the Temporal dev server")
	}
	rec := newReceiver(t)
	tracedRun(t, rec, map[string]string{"GUILDS_OTEL_CAPTURE_CONTENT": "1"})
	var lookup span
	for _, s := range rec.Spans() {
		if s.Name == "execute_tool notion_lookup" {
			lookup = s
		}
		for k, v := range s.Attrs {
			if strings.Contains(v, credential) || strings.Contains(v, boxKey) {
				t.Errorf("span %s attribute %s holds a credential", s.Name, k)
			}
		}
	}
	if !strings.Contains(lookup.Attrs["gen_ai.tool.call.result"], rawMarker) || !strings.Contains(lookup.Attrs["gen_ai.tool.call.arguments"], "roadmap") {
		t.Errorf("captured content: %v", lookup.Attrs)
	}
}

func names(spans []span) string {
	var b strings.Builder
	for _, s := range spans {
		b.WriteString("\n  " + s.Name)
	}
	return b.String()
}
