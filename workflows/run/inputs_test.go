package run_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"
	"google.golang.org/protobuf/proto"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/workflows/run"
)

// shopOfferer offers the native tools and shop_order, a tool of a real MCP
// server reached through the session pool on connection id.
type shopOfferer struct {
	native runact.NativeOfferer
	id     string
}

func (o shopOfferer) Offered(ctx context.Context, db store.DB, agentID, trigger string) (runact.Offer, error) {
	off, err := o.native.Offered(ctx, db, agentID, trigger)
	if err != nil {
		return off, err
	}
	schema := json.RawMessage(`{"type":"object","properties":{}}`)
	off.Tools = append(off.Tools, runact.OfferedTool{Name: "shop_order", Kind: "mcp", Description: "Order copies",
		Schema: schema, ShapedSchema: schema, ConnectionID: o.id, ServerSlug: "shop", RemoteName: "order", Class: tools.ClassMCP})
	return off, nil
}

// The delivery note is what a person types into the server's form: it goes
// to the server, and nowhere else.
const deliveryNote = "leave it with the porter, code 4417"

// shopRun is a platform with a worker whose runs may call shop_order, a tool
// of a real MCP server (mcp-go's server package) reached through the session
// pool; its catalog row sends the server's forms to a person.
type shopRun struct {
	e           *apitest.Env
	c           client.Client
	org, agent  string
	op, outside string
	shop        *shopServer
	// startWorker starts a worker on the run's queue and returns its stop;
	// stopWorker stops the first one.
	startWorker func() func()
	stopWorker  func()
}

func newShopRun(t *testing.T) shopRun {
	t.Helper()
	c := quietClient(t)
	queue := testtemporal.TaskQueue(t)
	model := newScriptedModel(t, turn{Calls: []call{{"shop_order", `{}`}}}, turn{Text: "ordered"})
	vars := map[string]string{"OPENROUTER_API_KEY": boxKey}
	e := apitest.New(t, apitest.Options{Env: vars, Tweak: func(d *api.Deps) {
		d.Temporal = c
		d.RunTaskQueue = queue
		d.Models = &models.Resolver{Integrations: integrations.New(func(k string) string { return vars[k] }),
			BaseURLs: map[string]string{models.OpenRouter: model.URL}}
	}})
	ctx := context.Background()
	if _, err := e.DB.Exec(ctx, sideEffectsTable); err != nil {
		t.Fatal(err)
	}
	org, _, agent := e.Hierarchy()
	op, outsider := e.Operator(org), e.Operator("")
	shop := newShopServer(t)
	conn := shop.connect(t, e.DB, org)
	pool := mcppool.New(mcppool.Options{DB: e.DB})
	t.Cleanup(pool.Close)
	kr := testKeyring(t)
	a, closeMCP := activitiesWith(e.DB, t.TempDir(), model.URL, newMCPServer(t).URL, "", slog.New(slog.DiscardHandler), false,
		func(d *runact.Deps) {
			d.MCP = pool
			d.Keyring = kr
			d.Offerer = shopOfferer{native: runact.NativeOfferer{Tools: d.Tools}, id: conn}
		})
	t.Cleanup(closeMCP)
	s := shopRun{e: e, c: c, org: org, agent: agent, op: op, outside: outsider, shop: shop}
	s.startWorker = func() func() {
		w := sdkworker.New(c, queue, sdkworker.Options{})
		run.Register(w, a)
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		stopped := false
		stop := func() {
			if !stopped {
				stopped = true
				w.Stop()
			}
		}
		t.Cleanup(stop)
		return stop
	}
	s.stopWorker = s.startWorker()
	return s
}

// start starts a run of the agent through the API.
func (s shopRun) start(t *testing.T) string {
	t.Helper()
	r := s.e.Do(s.op, "POST", "/api/agents/"+s.agent+"/runs", map[string]any{"message": "order some", "budget": 5})
	if r.Status != 201 {
		t.Fatalf("start = %d %s", r.Status, r.Body)
	}
	return r.Map()["id"].(string)
}

// end waits for the run's workflow to end.
func (s shopRun) end(t *testing.T, id string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a failure bound
	defer cancel()
	var res run.Result
	return s.c.GetWorkflow(ctx, run.WorkflowID(id), "").Get(ctx, &res)
}

// A run whose tool's server asks for input: the call waits, the operator
// finds the server's form in the inbox, a bad answer is refused with the
// reason and changes nothing, the good answer goes to the server, and the run
// goes on with the tool's result. The answer is in no history and no longer
// in the table.
func TestARunWaitsForAPersonToFillAServersForm(t *testing.T) {
	t.Parallel()
	s := newShopRun(t)
	e, c, org, op, outsider := s.e, s.c, s.org, s.op, s.outside
	ctx := context.Background()
	id := s.start(t)
	req := pendingInput(t, e, id)
	if got, err := runs.Load(ctx, e.DB, id); err != nil || got.Status != runs.StatusWaiting {
		t.Fatalf("the run reads %v while it waits (%v)", got.Status, err)
	}
	var inbox []inputs.Request
	e.Do(op, "GET", "/api/orgs/"+org+"/inputs", nil).JSON(&inbox)
	if len(inbox) != 1 || inbox[0].ID != req.ID || inbox[0].Server != "shop" || inbox[0].Tool != "shop_order" ||
		!strings.Contains(string(inbox[0].Schema), "copies") {
		t.Fatalf("inbox = %+v", inbox)
	}
	if r := e.Do(outsider, "POST", "/api/inputs/"+req.ID, map[string]any{"action": "decline"}); r.Status != 404 {
		t.Fatalf("an outsider's answer = %d %s", r.Status, r.Body)
	}
	r := e.Do(op, "POST", "/api/inputs/"+req.ID, map[string]any{"action": "accept", "content": map[string]any{"copies": 40, "note": deliveryNote}})
	if r.Status != 422 || !strings.Contains(string(r.Body), `"copies\" must be at most 10`) {
		t.Fatalf("an answer outside the form = %d %s", r.Status, r.Body)
	}
	r = e.Do(op, "POST", "/api/inputs/"+req.ID, map[string]any{"action": "accept", "content": map[string]any{"copies": 4, "note": deliveryNote}})
	if r.Status != 200 {
		t.Fatalf("answer = %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "POST", "/api/inputs/"+req.ID, map[string]any{"action": "decline"}); r.Status != 409 {
		t.Fatalf("a second answer = %d %s", r.Status, r.Body)
	}
	if err := s.end(t, id); err != nil {
		t.Fatal(err)
	}
	calls, err := runs.ToolCalls(ctx, e.DB, id)
	if err != nil || len(calls) != 1 || calls[0].Result == "" || !strings.Contains(calls[0].Result, "ordered 4 copies, with the note") {
		t.Fatalf("calls = %+v, %v", calls, err)
	}
	if got, _ := runs.Load(ctx, e.DB, id); got.Status != runs.StatusCompleted {
		t.Fatalf("run = %s", got.Status)
	}
	if bytes.Contains(historyOf(t, c, id), []byte(deliveryNote)) {
		t.Fatal("the person's answer is in the run's history")
	}
	var left int
	if err := e.DB.QueryRow(ctx, `SELECT count(*) FROM input_requests WHERE content IS NOT NULL`).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d answers still stored (%v)", left, err)
	}
}

// A run cancelled while its call waits for a form: the call ends, the
// request reads expired (the server was told no), and the run is cancelled.
func TestARunCancelledWhileAFormWaits(t *testing.T) {
	t.Parallel()
	s := newShopRun(t)
	id := s.start(t)
	req := pendingInput(t, s.e, id)
	if r := s.e.Do(s.op, "POST", "/api/runs/"+id+"/cancel", nil); r.Status != 200 && r.Status != 202 {
		t.Fatalf("cancel = %d %s", r.Status, r.Body)
	}
	_ = s.end(t, id) // a cancelled workflow's Get is an error
	got, err := inputs.Get(context.Background(), s.e.DB, req.ID, nil)
	if err != nil || got.State != inputs.StateExpired {
		t.Fatalf("request = %+v, %v", got.State, err)
	}
	if r, _ := runs.Load(context.Background(), s.e.DB, id); r.Status != runs.StatusCancelled {
		t.Fatalf("run = %s", r.Status)
	}
	if r := s.e.Do(s.op, "POST", "/api/inputs/"+req.ID, map[string]any{"action": "decline"}); r.Status != 409 {
		t.Fatalf("an answer after the run ended = %d %s", r.Status, r.Body)
	}
}

// pendingInput waits for the run's pending input request: the run turning
// "waiting" notifies guilds_run_events, and the query runs again at each
// notification, never on a clock.
func pendingInput(t *testing.T, e *apitest.Env, runID string) inputs.Request {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a failure bound, not a pace
	defer cancel()
	conn, err := e.DB.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN guilds_run_events"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "UNLISTEN guilds_run_events") //nolint:errcheck
	for {
		if list, err := inputs.List(ctx, conn, inputs.Filter{RunID: runID, State: inputs.StatePending}); err == nil && len(list) > 0 {
			if r, err := runs.Load(ctx, conn, runID); err == nil && r.Status == runs.StatusWaiting {
				return list[0]
			}
		}
		if _, err := conn.Conn().WaitForNotification(ctx); err != nil {
			t.Fatalf("run %s: no pending input: %v", runID, err)
		}
	}
}

func historyOf(t *testing.T, c client.Client, id string) []byte {
	t.Helper()
	it := c.GetWorkflowHistory(context.Background(), run.WorkflowID(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	raw, err := proto.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
