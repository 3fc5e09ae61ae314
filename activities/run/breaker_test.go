package run_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/breaker"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

// flakyPeer is a real MCP server (mcp-go's server package over Streamable
// HTTP) that counts the requests reaching it and, while failing, answers
// every one of them 502, as a broken service behind a proxy does.
type flakyPeer struct {
	url       string
	requests  atomic.Int64
	failing   atomic.Bool
	toolError atomic.Bool // lookup answers a tool error result (isError)
	hang      atomic.Bool // lookup never answers
}

func newFlakyPeer(t testing.TB) *flakyPeer {
	t.Helper()
	p := &flakyPeer{}
	s := mcpserver.NewMCPServer("notion", "1.0.0", mcpserver.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("lookup", mcp.WithString("query", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if p.hang.Load() {
				<-ctx.Done()
				return nil, ctx.Err()
			}
			if p.toolError.Load() {
				return mcp.NewToolResultError("no page named " + req.GetString("query", "")), nil
			}
			return mcp.NewToolResultText("page for " + req.GetString("query", "")), nil
		})
	h := mcpserver.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		if p.failing.Load() {
			http.Error(w, "bad gateway", http.StatusBadGateway)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

// testClock is a test's time, moved by hand past a cool-off.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// guardedRun is a run whose agent has an MCP login on a peer, with the
// production pool, call path and the given breaker and call rate.
type guardedRun struct {
	db     *pgxpool.Pool
	runID  string
	org    string
	conn   string
	acts   *runact.Activities
	seq    int
	remote string      // the offered tool's name
	deps   runact.Deps // what acts was built with
}

func newGuardedRun(t testing.TB, db *pgxpool.Pool, peerURL string, deps runact.Deps) *guardedRun {
	t.Helper()
	ctx := context.Background()
	g := &guardedRun{db: db, remote: "notion_lookup", seq: 1}
	var guild, agent, sid string
	slug := "acme-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', $1) RETURNING id`, slug).Scan(&g.org); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, g.org).Scan(&guild); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, model, prompt) VALUES ($1, 'scout', 'openrouter/test-model', 'Test.') RETURNING id`,
		guild).Scan(&agent); err != nil {
		t.Fatal(err)
	}
	if peerURL != "" {
		if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
			VALUES ($1, $1, 'http', $2, 'oauth', '{}') RETURNING id`, "notion-"+slug, peerURL+"/mcp").Scan(&sid); err != nil {
			t.Fatal(err)
		}
		g.conn = connectionstest.InsertAs(t, db, sid, "organisation", g.org, connstore.StatusConnected)
		quiet := slog.New(slog.DiscardHandler)
		pool := mcppool.New(mcppool.Options{DB: db, Credentials: traceCreds{}, Log: quiet})
		t.Cleanup(pool.Close)
		deps.MCP, deps.Offerer = pool, traceOfferer{connectionID: g.conn}
		deps.Secrets = traceSecrets{traceCredential}
	}
	deps.DB = db
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Heartbeat == 0 {
		deps.Heartbeat = time.Second
	}
	g.deps = deps
	g.acts = runact.New(deps)
	r, err := runs.Create(ctx, db, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: g.org, Trigger: "direct",
		Model: "openrouter/test-model", Budget: 1 << 20, Message: "look the roadmap up"})
	if err != nil {
		t.Fatal(err)
	}
	g.runID = r.ID
	if _, err := g.acts.Snapshot(ctx, runact.SnapshotInput{RunID: r.ID}); err != nil {
		t.Fatal(err)
	}
	return g
}

func (g *guardedRun) call(t *testing.T, name, args string) runact.ToolOutput {
	t.Helper()
	g.seq++
	out, err := g.acts.Tool(context.Background(), runact.ToolInput{RunID: g.runID, Seq: g.seq, CallID: "call_" + strconv.Itoa(g.seq),
		Name: name, Arguments: args, Remaining: 100})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// auditOutcome is the audit trail's outcome of the run's call at seq.
func (g *guardedRun) auditOutcome(t *testing.T, seq int) string {
	t.Helper()
	var outcome string
	if err := g.db.QueryRow(context.Background(), `SELECT outcome FROM audit_events WHERE run_id = $1 AND seq = $2 AND action = 'tool_call'`,
		g.runID, seq).Scan(&outcome); err != nil {
		t.Fatal(err)
	}
	return outcome
}

// A login whose server fails three calls in a row is paused: the next call
// is refused without reaching the server, with a result that says until
// when, and audited as refused. After the cool-off one trial call goes
// through, and its answer closes the breaker.
func TestBreakerPausesAFailingLogin(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	peer := newFlakyPeer(t)
	clock := &testClock{t: time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)}
	b := breaker.New(db, breaker.Settings{Failures: 3, CoolOff: time.Minute}, clock.now)
	g := newGuardedRun(t, db, peer.url, runact.Deps{Tools: tools.NewRegistry(), Breaker: b})
	const args = `{"query":"roadmap"}`

	if out := g.call(t, g.remote, args); out.Outcome != runs.OutcomeOK {
		t.Fatalf("healthy call: %s %q", out.Outcome, out.Result)
	}
	peer.failing.Store(true)
	for i := 0; i < 3; i++ {
		before := peer.requests.Load()
		if out := g.call(t, g.remote, args); out.Outcome != runs.OutcomeError {
			t.Fatalf("failing call %d: %s %q", i+1, out.Outcome, out.Result)
		}
		if peer.requests.Load() == before {
			t.Fatalf("failing call %d did not reach the server", i+1)
		}
	}
	before := peer.requests.Load()
	out := g.call(t, g.remote, args)
	want := "notion is paused after 3 failures in a row; it will be tried again at 2026-12-05T01:01:00Z"
	if out.Outcome != runs.OutcomeRefused || !strings.Contains(out.Result, want) {
		t.Fatalf("call while paused: %s %q", out.Outcome, out.Result)
	}
	if n := peer.requests.Load() - before; n != 0 {
		t.Fatalf("a refused call sent %d requests to the server", n)
	}
	if got := g.auditOutcome(t, g.seq); got != runs.OutcomeRefused {
		t.Fatalf("audit outcome %q, want refused", got)
	}
	st, err := breaker.Get(context.Background(), db, g.conn)
	if err != nil || st.PausedUntil == nil || st.Failures != 3 {
		t.Fatalf("health: %+v %v", st, err)
	}

	// The service is back; the cool-off passes; the trial goes and closes it.
	peer.failing.Store(false)
	clock.add(time.Minute)
	before = peer.requests.Load()
	if out := g.call(t, g.remote, args); out.Outcome != runs.OutcomeOK || !strings.Contains(out.Result, "page for roadmap") {
		t.Fatalf("trial call: %s %q", out.Outcome, out.Result)
	}
	if peer.requests.Load() == before {
		t.Fatal("the trial call did not reach the server")
	}
	if st, _ := breaker.Get(context.Background(), db, g.conn); st != (breaker.State{}) {
		t.Fatalf("after the trial answered: %+v", st)
	}
	if out := g.call(t, g.remote, args); out.Outcome != runs.OutcomeOK {
		t.Fatalf("after closing: %s %q", out.Outcome, out.Result)
	}
}

// A failed trial pauses the login again, for twice as long.
func TestBreakerFailedTrialDoublesThePause(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	peer := newFlakyPeer(t)
	clock := &testClock{t: time.Date(2026, 12, 5, 1, 0, 0, 0, time.UTC)}
	b := breaker.New(db, breaker.Settings{Failures: 2, CoolOff: time.Minute}, clock.now)
	g := newGuardedRun(t, db, peer.url, runact.Deps{Tools: tools.NewRegistry(), Breaker: b})
	const args = `{"query":"roadmap"}`
	peer.failing.Store(true)
	g.call(t, g.remote, args)
	g.call(t, g.remote, args)
	clock.add(time.Minute)
	before := peer.requests.Load()
	if out := g.call(t, g.remote, args); out.Outcome != runs.OutcomeError || peer.requests.Load() == before {
		t.Fatalf("the trial should reach the failing server: %s %q", out.Outcome, out.Result)
	}
	out := g.call(t, g.remote, args)
	if out.Outcome != runs.OutcomeRefused || !strings.Contains(out.Result, "tried again at 2026-12-05T01:03:00Z") {
		t.Fatalf("after the failed trial: %s %q", out.Outcome, out.Result)
	}
}

// A tool's own error result is the service answering, and arguments the
// schema refuses are never sent: neither pauses the login.
func TestBreakerIgnoresToolErrorsAndBadInput(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	peer := newFlakyPeer(t)
	b := breaker.New(db, breaker.Settings{Failures: 2, CoolOff: time.Minute}, nil)
	g := newGuardedRun(t, db, peer.url, runact.Deps{Tools: tools.NewRegistry(), Breaker: b})
	peer.toolError.Store(true)
	for i := 0; i < 3; i++ {
		if out := g.call(t, g.remote, `{"query":"nowhere"}`); out.Outcome != runs.OutcomeError || !strings.Contains(out.Result, "no page named nowhere") {
			t.Fatalf("tool error %d: %s %q", i+1, out.Outcome, out.Result)
		}
		if out := g.call(t, g.remote, `{"query":42}`); out.Outcome != runs.OutcomeError {
			t.Fatalf("bad input %d: %s %q", i+1, out.Outcome, out.Result)
		}
	}
	if st, _ := breaker.Get(context.Background(), db, g.conn); st != (breaker.State{}) {
		t.Fatalf("tool errors and bad input counted: %+v", st)
	}
}

// A call whose server never answers ends at the pool's call bound and is
// recorded, and audited, as timed out, apart from a failure (issue 33).
func TestCallThatTimesOutIsRecordedTimedOut(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	peer := newFlakyPeer(t)
	g := newGuardedRun(t, db, peer.url, runact.Deps{Tools: tools.NewRegistry()})
	// The bound is what is under test: the server never answers.
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: traceCreds{}, Log: g.deps.Log, CallTimeout: time.Second})
	t.Cleanup(pool.Close)
	g.deps.MCP = pool
	g.acts = runact.New(g.deps)
	peer.hang.Store(true)
	out := g.call(t, g.remote, `{"query":"roadmap"}`)
	if out.Outcome != runs.OutcomeTimedOut || !strings.HasPrefix(out.Result, "ERROR: ") {
		t.Fatalf("a call that never got an answer: %s %q", out.Outcome, out.Result)
	}
	if got := g.auditOutcome(t, g.seq); got != runs.OutcomeTimedOut {
		t.Fatalf("audit outcome %q, want timed_out", got)
	}
}
