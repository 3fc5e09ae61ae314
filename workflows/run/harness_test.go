package run_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	mcpclient "github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"
	sdkworker "go.temporal.io/sdk/worker"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/native/issues"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/workflows/run"
)

// The credential of the test MCP connection: it must never reach a result,
// the transcript or the workflow history.
const mcpSecret = "sk-mcp-secret-7f3a9c21e4b8"

const boxKey = "or-box-key-0123456789"

// testImage is the image the test MCP server returns for the query
// "screenshot"; only its bytes matter.
var testImage = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte("pixels"), 200)...)

func TestMain(m *testing.M) {
	if os.Getenv("GUILDS_RUN_TEST_WORKER") == "1" {
		os.Exit(workerProcess())
	}
	os.Exit(testtemporal.Main(m))
}

// ---- scripted model ---------------------------------------------------------

// turn is one scripted model answer.
type turn struct {
	Status int    // non-zero: answer with this HTTP error instead
	Text   string // assistant content
	Calls  []call
}

type call struct{ Name, Args string }

// scriptedModel is an OpenAI-compatible /chat/completions server replaying a
// script and recording every request it received.
type scriptedModel struct {
	*httptest.Server
	mu       sync.Mutex
	script   []turn
	next     int
	requests []chatRequest
	// repeat, when set, answers every request past the script.
	repeat func(n int) turn
	// answer, when set, answers every request from the request itself
	// (the load test: many runs at once, each at its own point).
	answer func(req chatRequest) turn
	// drop leaves the requests unrecorded (the load test makes thousands).
	drop bool
	// hold, when set, is called with each request's number before it is
	// answered, outside the lock; it can keep the request waiting (a model
	// turn in progress) until the request's context ends.
	hold func(r *http.Request, n int)
}

type chatRequest struct {
	Auth     string
	Model    string `json:"model"`
	Messages []struct {
		Role    string `json:"role"`
		Content string `json:"content"` // a list of parts: its texts joined
		// ImageURLs are the urls of the message's image_url parts.
		ImageURLs  []string `json:"image_urls"`
		ToolCallID string   `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct{ Name, Arguments string }
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

func newScriptedModel(t testing.TB, script ...turn) *scriptedModel {
	s := &scriptedModel{script: script}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *scriptedModel) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/chat/completions" {
		http.NotFound(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req chatRequest
	if err := json.Unmarshal(flattenParts(body), &req); err != nil {
		http.Error(w, `{"error":{"message":"bad json"}}`, 400)
		return
	}
	req.Auth = r.Header.Get("Authorization")
	s.mu.Lock()
	if !s.drop {
		s.requests = append(s.requests, req)
	}
	n := s.next
	s.next++
	var tr turn
	switch {
	case s.answer != nil:
		tr = s.answer(req)
	case n < len(s.script):
		tr = s.script[n]
	case s.repeat != nil:
		tr = s.repeat(n)
	default:
		tr = turn{Text: "script exhausted"}
	}
	hold := s.hold
	s.mu.Unlock()
	if hold != nil {
		hold(r, n)
		if r.Context().Err() != nil {
			return // the caller is gone (its worker was killed)
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if tr.Status != 0 {
		w.WriteHeader(tr.Status)
		fmt.Fprintf(w, `{"error":{"message":"scripted %d"}}`, tr.Status)
		return
	}
	type fn struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	}
	type tc struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function fn     `json:"function"`
	}
	msg := map[string]any{"role": "assistant", "content": tr.Text}
	if len(tr.Calls) > 0 {
		calls := make([]tc, len(tr.Calls))
		for i, c := range tr.Calls {
			calls[i] = tc{ID: fmt.Sprintf("call_%d_%d", n, i), Type: "function", Function: fn{c.Name, c.Args}}
		}
		msg["tool_calls"] = calls
	}
	finish := "stop"
	if len(tr.Calls) > 0 {
		finish = "tool_calls"
	}
	json.NewEncoder(w).Encode(map[string]any{ //nolint:errcheck
		"id": "cmpl", "object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]int{"prompt_tokens": 10, "completion_tokens": 5},
	})
}

// flattenParts rewrites each message whose content is a list of parts into
// its texts joined and its image urls (image_urls), so chatRequest reads both.
func flattenParts(body []byte) []byte {
	var req map[string]any
	if json.Unmarshal(body, &req) != nil {
		return body
	}
	msgs, _ := req["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		parts, ok := msg["content"].([]any)
		if !ok {
			continue
		}
		var text []string
		var urls []any
		for _, p := range parts {
			part, _ := p.(map[string]any)
			if t, ok := part["text"].(string); ok {
				text = append(text, t)
			}
			if iu, ok := part["image_url"].(map[string]any); ok {
				urls = append(urls, iu["url"])
			}
		}
		msg["content"] = strings.Join(text, "\n")
		msg["image_urls"] = urls
	}
	out, err := json.Marshal(req)
	if err != nil {
		return body
	}
	return out
}

func (s *scriptedModel) Requests() []chatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]chatRequest(nil), s.requests...)
}

// ---- MCP peer -----------------------------------------------------------------

// newMCPServer is a real MCP server over streamable HTTP that requires the
// bearer credential and echoes it back in its result (a leaky remote).
func newMCPServer(t testing.TB) *httptest.Server {
	s := mcpserver.NewMCPServer("test-notion", "1.0.0", mcpserver.WithToolCapabilities(true))
	s.AddTool(mcp.NewTool("lookup", mcp.WithDescription("Look a page up"),
		mcp.WithString("query", mcp.Required()), mcp.WithString("space")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			q, _ := req.GetArguments()["query"].(string)
			_, hasSpace := req.GetArguments()["space"]
			if q == "chart" { // a result with an MCP Apps page, leaking the credential
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("3 points"),
					mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "ui://notion/chart", MIMEType: tools.AppMediaType, Text: testAppPage})}}, nil
			}
			if q == "screenshot" { // a result with an image part
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("the page as drawn:"),
					mcp.NewImageContent(base64.StdEncoding.EncodeToString(testImage), "image/png")}}, nil
			}
			return mcp.NewToolResultText(fmt.Sprintf("page for %q (space sent: %v); debug: authorized with Bearer %s", q, hasSpace, mcpSecret)), nil
		})
	h := mcpserver.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+mcpSecret {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// mcpCaller is a minimal stand-in for internal/mcppool: one session per
// connection, the credential injected on the transport.
type mcpCaller struct {
	url        string
	adapterURL string // the quote service of adapterConnection
	mu         sync.Mutex
	c          *mcpclient.Client
}

func (m *mcpCaller) session(ctx context.Context) (*mcpclient.Client, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.c != nil {
		return m.c, nil
	}
	c, err := mcpclient.NewStreamableHttpClient(m.url, transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + mcpSecret}))
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "guilds-test", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		return nil, err
	}
	m.c = c
	return c, nil
}

// CallParts answers as internal/mcppool does: text and images apart.
func (m *mcpCaller) CallParts(ctx context.Context, connectionID, remoteName string, args json.RawMessage) ([]tools.Part, error) {
	if connectionID == adapterConnection {
		out, err := m.quote(ctx, args)
		return []tools.Part{{Text: out}}, err
	}
	c, err := m.session(ctx)
	if err != nil {
		return nil, err
	}
	var a map[string]any
	if err := json.Unmarshal(args, &a); err != nil {
		return nil, err
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = remoteName
	req.Params.Arguments = a
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil, err
	}
	return mcppool.Parts(res), nil
}

func (m *mcpCaller) Call(ctx context.Context, connectionID, remoteName string, args json.RawMessage) (string, error) {
	if connectionID == adapterConnection {
		return m.quote(ctx, args)
	}
	c, err := m.session(ctx)
	if err != nil {
		return "", err
	}
	var a map[string]any
	if err := json.Unmarshal(args, &a); err != nil {
		return "", err
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = remoteName
	req.Params.Arguments = a
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	out := ""
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			out += tc.Text
		}
	}
	if res.IsError {
		return "", errors.New(out)
	}
	return out, nil
}

// quote is quotes_quote: one GET to the local quote service.
func (m *mcpCaller) quote(ctx context.Context, args json.RawMessage) (string, error) {
	var a struct{ Symbol string }
	if err := json.Unmarshal(args, &a); err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.adapterURL+"/quote?symbol="+url.QueryEscape(a.Symbol), nil)
	if err != nil {
		return "", err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("quote service: %d %s %v", res.StatusCode, body, err)
	}
	return a.Symbol + "\t" + string(body), nil
}

func (m *mcpCaller) Close() {
	if m.c != nil {
		_ = m.c.Close()
	}
}

// ---- offer, secrets, tools ------------------------------------------------------

var mcpSchema = json.RawMessage(`{"type":"object","properties":{"query":{"type":"string"},"space":{"type":"string"}},"required":["query"]}`)

// testOfferer offers every native tool plus notion_lookup on an MCP
// connection, and refuses to start the runs of agents named "disconnected".
type testOfferer struct {
	native  runact.NativeOfferer
	mcp     bool
	adapter bool // also quotes_quote (adapterConnection)
}

func (o testOfferer) Offered(ctx context.Context, db store.DB, agentID, trigger string) (runact.Offer, error) {
	var name string
	if err := db.QueryRow(ctx, `SELECT name FROM agents WHERE id = $1`, agentID).Scan(&name); err != nil {
		return runact.Offer{}, err
	}
	if name == "disconnected" {
		return runact.Offer{}, &runact.StartRefusedError{Reason: "the notion server is enabled but its connection is disconnected: reconnect it"}
	}
	off, err := o.native.Offered(ctx, db, agentID, trigger)
	if err != nil || !o.mcp {
		return off, err
	}
	shaped, _, err := tools.Shape(mcpSchema)
	if err != nil {
		return off, err
	}
	off.Tools = append(off.Tools, runact.OfferedTool{Name: "notion_lookup", Kind: "mcp", Description: "Look a Notion page up",
		Schema: mcpSchema, ShapedSchema: shaped, ConnectionID: "00000000-0000-0000-0000-0000000000c1",
		ServerSlug: "notion", RemoteName: "lookup", Class: tools.ClassMCP})
	if o.adapter {
		quote := json.RawMessage(`{"type":"object","properties":{"symbol":{"type":"string"}},"required":["symbol"]}`)
		off.Tools = append(off.Tools, runact.OfferedTool{Name: "quotes_quote", Kind: "mcp", Description: "A price",
			Schema: quote, ShapedSchema: quote, ConnectionID: adapterConnection,
			ServerSlug: "quotes", RemoteName: "quote", Class: tools.ClassAdapter})
	}
	return off, nil
}

// adapterConnection is the connection of quotes_quote: mcpCaller sends its
// calls to the local quote service as an adapter would, over plain HTTP.
const adapterConnection = "00000000-0000-0000-0000-0000000000c2"

type fixedSecrets []string

func (s fixedSecrets) RunSecrets(context.Context, string) ([]string, error) { return s, nil }

const sideEffectsTable = `CREATE TABLE IF NOT EXISTS test_executions (tool text NOT NULL, run_id text NOT NULL, at timestamptz NOT NULL DEFAULT now())`

// testRegistry holds report_issue and the test tools. gate is the folder in
// which "block" waits for a file named "open".
func testRegistry(db *pgxpool.Pool, gate string, log *slog.Logger) *tools.Registry {
	return testRegistryWith(db, gate, log, false)
}

// testRegistryWith is testRegistry with echo, add and noop marked quick
// (the fast path) when quick is set.
func testRegistryWith(db *pgxpool.Pool, gate string, log *slog.Logger, quick bool) *tools.Registry {
	reg := tools.NewRegistry(tools.WithLogger(log))
	issues.Register(reg, db)
	count := func(ctx context.Context, name string, c tools.Call) error {
		_, err := db.Exec(ctx, `INSERT INTO test_executions (tool, run_id) VALUES ($1, $2)`, name, c.RunID)
		return err
	}
	reg.Register(tools.Tool{Name: "echo", Quick: quick, Description: "Echo text back", Idempotent: true,
		Schema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Handler: func(ctx context.Context, c tools.Call) (string, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(c.Args, &a)
			tools.SetMetadata(ctx, "exit_code", 0)
			tools.SetMetadata(ctx, "kind", "overridden?")      // the platform's own fields win
			tools.SetMetadata(ctx, "seen", "token "+mcpSecret) // stored redacted
			return "echo: " + a.Text, nil
		}})
	reg.Register(tools.Tool{Name: "add", Quick: quick, Description: "Add two numbers", Idempotent: true,
		Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
		Handler: func(ctx context.Context, c tools.Call) (string, error) {
			var a struct{ A, B float64 }
			_ = json.Unmarshal(c.Args, &a)
			return fmt.Sprint(a.A + a.B), nil
		}})
	reg.Register(tools.Tool{Name: "fail", Description: "Always fails",
		Schema: json.RawMessage(`{"type":"object","properties":{}}`),
		Handler: func(ctx context.Context, c tools.Call) (string, error) {
			return "", errors.New("the upstream said no")
		}})
	reg.Register(tools.Tool{Name: "side_effect", Description: "Does something once",
		Schema: json.RawMessage(`{"type":"object","properties":{}}`),
		Handler: func(ctx context.Context, c tools.Call) (string, error) {
			if err := count(ctx, "side_effect", c); err != nil {
				return "", err
			}
			return "done once", nil
		}})
	reg.Register(tools.Tool{Name: "block", Description: "Waits for the gate",
		Schema: json.RawMessage(`{"type":"object","properties":{}}`),
		Handler: func(ctx context.Context, c tools.Call) (string, error) {
			if err := count(ctx, "block", c); err != nil {
				return "", err
			}
			for {
				if _, err := os.Stat(filepath.Join(gate, "open")); err == nil {
					return "gate opened", nil
				}
				select {
				case <-ctx.Done():
					return "", ctx.Err()
				case <-time.After(50 * time.Millisecond):
				}
			}
		}})
	reg.Register(tools.Tool{Name: "noop", Quick: quick, Description: "Does nothing", Idempotent: true,
		Schema:  json.RawMessage(`{"type":"object","properties":{}}`),
		Handler: func(ctx context.Context, c tools.Call) (string, error) { return "ok", nil }})
	return reg
}

// quietClient dials the test server with the SDK's logging off, so test and
// benchmark output stay readable.
func quietClient(t testing.TB) client.Client {
	t.Helper()
	c, err := client.Dial(client.Options{HostPort: testtemporal.Address(t), Namespace: "default",
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// ---- environment ---------------------------------------------------------------

type env struct {
	t      testing.TB
	db     *pgxpool.Pool
	dbURL  string
	c      client.Client
	queue  string
	model  *scriptedModel
	res    *models.Resolver
	gate   string
	agent  string
	guild  string
	org    string
	mcpURL string
}

type envOptions struct {
	noWorker bool // the test runs its own worker processes
	noKey    bool
	agent    string
	quick    bool // echo, add and noop are quick: the fast path
	// interceptors are the worker's (the fast-path benchmark times calls with one)
	interceptors []interceptor.WorkerInterceptor
	approvals    runact.ApprovalGate // which calls wait for a person; nil: none
}

func newEnv(t testing.TB, o envOptions, script ...turn) *env {
	t.Helper()
	e := &env{t: t, dbURL: testdb.URL(t), c: quietClient(t), queue: testtemporal.TaskQueue(t), gate: t.TempDir()}
	db, err := pgxpool.New(context.Background(), e.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	e.db = db
	ctx := context.Background()
	if _, err := db.Exec(ctx, sideEffectsTable); err != nil {
		t.Fatal(err)
	}
	name := o.agent
	if name == "" {
		name = "scout"
	}
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&e.org); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, e.org).Scan(&e.guild); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, model, prompt) VALUES ($1, $2, 'openrouter/test-model', 'You are a test agent.') RETURNING id`,
		e.guild, name).Scan(&e.agent); err != nil {
		t.Fatal(err)
	}
	e.model = newScriptedModel(t, script...)
	e.mcpURL = newMCPServer(t).URL
	vars := map[string]string{"OPENROUTER_API_KEY": boxKey}
	if o.noKey {
		vars = nil
	}
	e.res = &models.Resolver{Integrations: integrations.New(func(k string) string { return vars[k] }),
		BaseURLs: map[string]string{models.OpenRouter: e.model.URL}}
	if !o.noWorker {
		e.startWorkerWith(e.db, o)
	}
	return e
}

// activities builds the run activities as the platform does, on db.
func activitiesFor(db *pgxpool.Pool, gate, modelURL, mcpURL string, log *slog.Logger) (*runact.Activities, func()) {
	return activitiesWith(db, gate, modelURL, mcpURL, "", log, false)
}

// activitiesWith is activitiesFor with the quick test tools on the fast path
// when quick is set.
// A non-empty adapterURL also offers quotes_quote, an adapter-class tool
// whose calls go to that local quote service.
func activitiesWith(db *pgxpool.Pool, gate, modelURL, mcpURL, adapterURL string, log *slog.Logger, quick bool, more ...func(*runact.Deps)) (*runact.Activities, func()) {
	reg := testRegistryWith(db, gate, log, quick)
	caller := &mcpCaller{url: mcpURL + "/mcp", adapterURL: adapterURL}
	res := &models.Resolver{Integrations: integrations.New(func(k string) string {
		if k == "OPENROUTER_API_KEY" {
			return boxKey
		}
		return ""
	}), BaseURLs: map[string]string{models.OpenRouter: modelURL}}
	d := runact.Deps{DB: db, Tools: reg, Offerer: testOfferer{native: runact.NativeOfferer{Tools: reg}, mcp: true, adapter: adapterURL != ""},
		MCP: caller, Secrets: fixedSecrets{mcpSecret, boxKey}, Models: res, Log: log, Heartbeat: 200 * time.Millisecond}
	for _, f := range more {
		f(&d)
	}
	return runact.New(d), caller.Close
}

func (e *env) startWorkerWith(db *pgxpool.Pool, o envOptions) {
	a, closeMCP := activitiesWith(db, e.gate, e.model.URL, e.mcpURL, "", slog.New(slog.DiscardHandler), o.quick, func(d *runact.Deps) {
		d.Approvals = o.approvals
	})
	w := sdkworker.New(e.c, e.queue, sdkworker.Options{Interceptors: o.interceptors})
	run.Register(w, a)
	if err := w.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { w.Stop(); closeMCP() })
}

// start starts a run of the env's agent.
func (e *env) start(msg string, budget int) string {
	e.t.Helper()
	id, err := run.Start(context.Background(), e.c, e.db, run.Input{AgentID: e.agent, Message: msg, Budget: budget,
		Models: e.res, TaskQueue: e.queue})
	if err != nil {
		e.t.Fatalf("start: %v", err)
	}
	return id
}

// wait waits for the run's workflow to end.
func (e *env) wait(runID string, timeout time.Duration) (run.Result, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var res run.Result
	err := e.c.GetWorkflow(ctx, run.WorkflowID(runID), "").Get(ctx, &res)
	return res, err
}

// count runs a count query.
func (e *env) count(sql string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.db.QueryRow(context.Background(), sql, args...).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}
