package run_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/workflows/run"
)

// shopState is the requestState the shop server hands back with its form:
// opaque to the client, and a stand-in for what a server would rather keep
// out of sight (it is sealed while the run waits, never in the history).
const shopState = "cart 7f3a: four copies reserved for tenant acme"

// shopServer is a stateless (2026-07-28) mcp-go server whose tool "order"
// answers input_required with a form, and completes once called again with
// the answer and its requestState.
type shopServer struct {
	url string
	// answered counts the calls that came back with an answer: a held call
	// must reach the server with it exactly once.
	answered atomic.Int32
}

func newShopServer(t testing.TB) *shopServer {
	t.Helper()
	s := &shopServer{}
	shop := server.NewMCPServer("shop", "1.0.0")
	shop.AddTool(mcp.NewTool("order"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if r := server.ElicitationResponse(req.Params.InputResponses, "order"); r != nil {
			s.answered.Add(1)
			if req.Params.RequestState != shopState {
				return mcp.NewToolResultError("the request state did not come back"), nil
			}
			if r.Action != mcp.ElicitationResponseActionAccept {
				return mcp.NewToolResultText("no order: " + string(r.Action)), nil
			}
			m, _ := r.Content.(map[string]any)
			if m["note"] != deliveryNote {
				return mcp.NewToolResultError("the note did not arrive"), nil
			}
			return mcp.NewToolResultText(fmt.Sprintf("ordered %v copies, with the note", m["copies"])), nil
		}
		return server.NewInputRequestBuilder(shopState).Elicit("order", mcp.ElicitationParams{Message: "How many copies, and a delivery note?",
			RequestedSchema: map[string]any{"type": "object", "required": []string{"copies"}, "properties": map[string]any{
				"copies": map[string]any{"type": "integer", "minimum": 1, "maximum": 10},
				"note":   map[string]any{"type": "string", "maxLength": 200}}}}).ToolResult(), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(shop))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

// connect adds the shop's catalog row (forms go to a person) and a login of
// the organisation, and returns the login's id.
func (s *shopServer) connect(t testing.TB, db *pgxpool.Pool, org string) string {
	t.Helper()
	var sid string
	if err := db.QueryRow(context.Background(), `INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
		VALUES ('shop', 'Shop', 'http', $1, 'none', '{"elicitation":"person"}') RETURNING id`, s.url).Scan(&sid); err != nil {
		t.Fatal(err)
	}
	return connectionstest.InsertAs(t, db, sid, "organisation", org, connstore.StatusConnected)
}

func testKeyring(t testing.TB) *secret.Keyring {
	t.Helper()
	entry, err := secret.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// A stateless server's form is held in the run, not in a worker: while the
// run waits no activity is running, the server's state is stored sealed, and
// the worker is stopped. The operator answers through the API, another
// worker comes up, and the call reaches the server once, with the answer and
// the state. Neither is in the history, and nothing of the wait is left.
func TestAHeldFormOutlivesTheWorker(t *testing.T) {
	t.Parallel()
	s := newShopRun(t)
	e, c, op := s.e, s.c, s.op
	ctx := context.Background()
	id := s.start(t)
	req := pendingInput(t, e, id)

	var sealed []byte
	if err := e.DB.QueryRow(ctx, `SELECT state FROM input_holds WHERE run_id = $1`, id).Scan(&sealed); err != nil {
		t.Fatalf("the held call: %v", err)
	}
	if len(sealed) == 0 || bytes.Contains(sealed, []byte("tenant acme")) {
		t.Fatalf("the request state is stored as %q", sealed)
	}
	// The call ended: the workflow waits on a timer and the signal alone.
	waitNoActivity(t, s, id)
	s.stopWorker()

	r := e.Do(op, "POST", "/api/inputs/"+req.ID, map[string]any{"action": "accept", "content": map[string]any{"copies": 4, "note": deliveryNote}})
	if r.Status != 200 {
		t.Fatalf("answer = %d %s", r.Status, r.Body)
	}
	s.startWorker()
	if err := s.end(t, id); err != nil {
		t.Fatal(err)
	}
	calls, err := runs.ToolCalls(ctx, e.DB, id)
	if err != nil || len(calls) != 1 || !strings.Contains(calls[0].Result, "ordered 4 copies, with the note") {
		t.Fatalf("calls = %+v, %v", calls, err)
	}
	if n := s.shop.answered.Load(); n != 1 {
		t.Fatalf("the server was sent the answer %d times", n)
	}
	h := historyOf(t, c, id)
	for _, secret := range []string{deliveryNote, shopState} {
		if bytes.Contains(h, []byte(secret)) {
			t.Fatalf("%q is in the run's history", secret)
		}
	}
	var holds, content int
	if err := e.DB.QueryRow(ctx, `SELECT (SELECT count(*) FROM input_holds), (SELECT count(*) FROM input_requests WHERE content IS NOT NULL)`).
		Scan(&holds, &content); err != nil || holds != 0 || content != 0 {
		t.Fatalf("left: %d holds, %d answers (%v)", holds, content, err)
	}
	got, err := inputs.Get(ctx, e.DB, req.ID, nil)
	if err != nil || got.State != inputs.StateAccepted || got.DeliveredAt == nil {
		t.Fatalf("request = %+v, %v", got, err)
	}
}

// waitNoActivity waits until the run's workflow starts the timer of its
// wait: the held call's activity has returned by then, and the run holds no
// activity. It follows the history with a long poll, event by event.
func waitNoActivity(t *testing.T, s shopRun, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a failure bound
	defer cancel()
	it := s.c.GetWorkflowHistory(ctx, run.WorkflowID(id), "", true, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.GetEventType() == enums.EVENT_TYPE_TIMER_STARTED {
			d, err := s.c.DescribeWorkflow(ctx, run.WorkflowID(id), "")
			if err != nil {
				t.Fatal(err)
			}
			if pending := d.RawResponse.GetPendingActivities(); len(pending) != 0 {
				t.Fatalf("activities pending while the run waits: %v", pending)
			}
			return
		}
	}
	t.Fatal("the run's history ended with no wait")
}

// heldWait is what one time-skipping run saw whose held form nobody
// answered.
type heldWait struct {
	steps  []string
	timers []time.Duration
	during string // the run's status three quarters into the wait
	result string // the call's stored result
	sent   int32  // calls that reached the server with an answer
	state  inputs.State
}

// waitUnanswered runs one run whose only call is shop_order, on Temporal's
// time-skipping environment, with the guild's waiting time for the tool set
// to wait, and nobody answering its form.
func waitUnanswered(t testing.TB, wait time.Duration) heldWait {
	t.Helper()
	e := newSkippingEnv(t, turn{Calls: []call{{"shop_order", `{}`}}}, turn{Text: "no order"})
	ctx := context.Background()
	if _, err := approvals.Save(ctx, e.db, approvals.Setting{Scope: approvals.ScopeGuild, ScopeID: e.guild,
		Tool: "shop_order", Wait: wait, UpdatedBy: "user:ann"}, nil); err != nil {
		t.Fatal(err)
	}
	shop := newShopServer(t)
	conn := shop.connect(t, e.db, e.org)
	pool := mcppool.New(mcppool.Options{DB: e.db})
	t.Cleanup(pool.Close)
	a, closeMCP := activitiesWith(e.db, e.gate, e.model.URL, e.mcpURL, "", slog.New(slog.DiscardHandler), false,
		func(d *runact.Deps) {
			d.MCP = pool
			d.Keyring = testKeyring(t)
			d.Offerer = shopOfferer{native: runact.NativeOfferer{Tools: d.Tools}, id: conn}
		})
	t.Cleanup(closeMCP)

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute) // real time the activities may take, a failure bound
	run.Register(env, a)
	var out heldWait
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		out.steps = append(out.steps, info.ActivityType.Name)
	})
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) {
		out.steps = append(out.steps, "timer")
		out.timers = append(out.timers, d)
	})
	env.SetOnTimerFiredListener(func(string) { out.steps = append(out.steps, "timer fired") })
	r := e.createRun("order some")
	env.RegisterDelayedCallback(func() { out.during = e.runStatusOf(r.ID) }, wait*3/4)
	env.ExecuteWorkflow(run.WorkflowName, run.Params{RunID: r.ID, AgentID: r.AgentID, GuildID: r.GuildID,
		OrganisationID: r.OrganisationID, Trigger: r.Trigger})
	if !env.IsWorkflowCompleted() {
		t.Fatal("the run did not end")
	}
	var res run.Result
	if err := env.GetWorkflowResult(&res); err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("run: %+v %v", res, err)
	}
	calls, err := runs.ToolCalls(ctx, e.db, r.ID)
	if err != nil || len(calls) != 1 {
		t.Fatalf("calls = %+v, %v", calls, err)
	}
	out.result = calls[0].Result
	out.sent = shop.answered.Load()
	reqs, err := inputs.List(ctx, e.db, inputs.Filter{RunID: r.ID})
	if err != nil || len(reqs) != 1 {
		t.Fatalf("requests = %+v, %v", reqs, err)
	}
	out.state = reqs[0].State
	return out
}

// Nobody answers a held form: the run waits the operators' waiting time for
// the tool (four days here, on Temporal's time-skipping environment), on one
// timer, holding nothing; then the call goes to the server once with
// "decline", and the request reads expired.
func TestAHeldFormNobodyAnswersIsDeclinedAtTheOperatorsTime(t *testing.T) {
	t.Parallel()
	got := waitUnanswered(t, 96*time.Hour)
	if got.during != runs.StatusWaiting {
		t.Errorf("run status three days in: %q", got.during)
	}
	if len(got.timers) != 1 || !near(got.timers[0], 96*time.Hour) {
		t.Errorf("timers %v, want one of four days", got.timers)
	}
	want := []string{runact.SnapshotName, runact.ModelName, runact.ToolName, "timer", "timer fired",
		runact.ToolName, runact.ModelName, runact.FinishName}
	if strings.Join(got.steps, " ") != strings.Join(want, " ") {
		t.Errorf("steps %v, want %v", got.steps, want)
	}
	if !strings.Contains(got.result, "no order: decline") || got.sent != 1 || got.state != inputs.StateExpired {
		t.Fatalf("result %q, sent %d times, request %s", got.result, got.sent, got.state)
	}
}

// BenchmarkHeldFormWait is what a held form's wait costs a run, by the
// length of the wait: the workflow's steps (activities and timers) per run,
// and so its history, do not grow with it; no activity runs while it waits.
//
//	go test ./workflows/run/ -run '^$' -bench BenchmarkHeldFormWait -benchtime 3x
func BenchmarkHeldFormWait(b *testing.B) {
	for _, days := range []int{1, 29} {
		b.Run(fmt.Sprintf("days=%d", days), func(b *testing.B) {
			b.ReportAllocs()
			var steps, timers int
			for b.Loop() {
				got := waitUnanswered(b, time.Duration(days)*24*time.Hour)
				steps, timers = len(got.steps), len(got.timers)
			}
			b.ReportMetric(float64(steps), "steps/run")
			b.ReportMetric(float64(timers), "timers/run")
		})
	}
}
