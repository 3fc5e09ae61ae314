package run_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	sdkworker "go.temporal.io/sdk/worker"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/workflows/run"
)

// askGate asks for side_effect always and for add when a is above 10 (a
// rule of the policy language), with a policy version the test can change
// while a request waits.
type askGate struct {
	mu      sync.Mutex
	version string
	wait    time.Duration
}

func (g *askGate) setVersion(v string) { g.mu.Lock(); g.version = v; g.mu.Unlock() }

func (g *askGate) Need(_ context.Context, _ runs.Run, offered runs.OfferedTool, args json.RawMessage) (*runact.ApprovalNeed, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := approvals.Policy{}
	switch offered.Name {
	case "side_effect":
	case "add":
		p.Rules = []approvals.Rule{{Arg: "a", Op: approvals.OpGreater, Value: "10"}}
	default:
		return nil, nil
	}
	if asks, _ := p.Asks(args); !asks {
		return nil, nil
	}
	return &runact.ApprovalNeed{PolicyVersion: g.version, Because: "the test policy", Wait: g.wait}, nil
}

// pending waits for the run's n-th request to be pending and returns it. A
// run that starts to wait changes its status to waiting, which notifies
// guilds_run_events: the query runs again at each notification, never on a
// clock.
func (e *env) pending(runID string, n int) approvals.Request {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a failure bound, not a pace
	defer cancel()
	conn, err := e.db.Acquire(ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN guilds_run_events"); err != nil {
		e.t.Fatal(err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "UNLISTEN guilds_run_events") //nolint:errcheck
	for {
		var id string
		err := conn.QueryRow(ctx, `SELECT id FROM approval_requests WHERE run_id = $1 AND state = 'pending'
			AND (SELECT count(*) FROM approval_requests WHERE run_id = $1) >= $2`, runID, n).Scan(&id)
		if err == nil {
			r, err := approvals.Get(ctx, e.db, id, nil)
			if err != nil {
				e.t.Fatal(err)
			}
			return r
		}
		if _, err := conn.Conn().WaitForNotification(ctx); err != nil {
			e.t.Fatalf("run %s: no pending request %d: %v", runID, n, err)
		}
	}
}

func (e *env) decide(runID, requestID string, d approvals.Decision) {
	e.t.Helper()
	if _, err := approvals.Decide(context.Background(), e.db, requestID, []string{e.org}, d); err != nil {
		e.t.Fatal(err)
	}
	if err := e.c.SignalWorkflow(context.Background(), run.WorkflowID(runID), "", run.ApprovalSignal,
		run.ApprovalSignalPayload{RequestID: requestID}); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) runStatus(runID string) string {
	r, err := runs.Load(context.Background(), e.db, runID)
	if err != nil {
		e.t.Fatal(err)
	}
	return r.Status
}

func TestAnApprovedCallRunsOnceWithTheApprovedArguments(t *testing.T) {
	t.Parallel()
	gate := &askGate{version: "p1:one"}
	e := newEnv(t, envOptions{approvals: gate},
		turn{Calls: []call{{"side_effect", `{}`}, {"add", `{"a":2,"b":3}`}}},
		turn{Text: "paid"})
	id := e.start("pay the bill", 10)
	req := e.pending(id, 1)
	if req.Tool != "side_effect" || req.RunID != id || req.AgentID != e.agent || !strings.HasPrefix(req.ArgsDigest, "sha256:") {
		t.Fatalf("request = %+v", req)
	}
	if got := e.runStatus(id); got != runs.StatusWaiting {
		t.Errorf("run status while it waits = %s", got)
	}
	if n := e.count(`SELECT count(*) FROM test_executions`); n != 0 {
		t.Fatalf("the tool ran before it was approved (%d)", n)
	}
	// add asked nothing (a is 2): it ran while side_effect waited.
	if n := e.count(`SELECT count(*) FROM tool_calls WHERE run_id = $1 AND tool_name = 'add' AND outcome = 'ok'`, id); n != 1 {
		t.Errorf("the call that asks nothing waited too (%d)", n)
	}
	e.decide(id, req.ID, approvals.Decision{Approve: true, UserName: "Ann"})
	res, err := e.wait(id, 2*time.Minute)
	if err != nil || res.Text != "paid" {
		t.Fatalf("run: %+v %v", res, err)
	}
	if n := e.count(`SELECT count(*) FROM test_executions WHERE tool = 'side_effect'`); n != 1 {
		t.Fatalf("side_effect ran %d times", n)
	}
	if n := e.count(`SELECT count(*) FROM approval_requests WHERE id = $1 AND state = 'used'`, req.ID); n != 1 {
		t.Error("the approval was not spent")
	}
	// The audit trail: one event per call, the approved one naming its approval.
	if n := e.count(`SELECT count(*) FROM audit_events WHERE run_id = $1 AND action = 'tool_call'`, id); n != 2 {
		t.Errorf("%d audit events for 2 calls", n)
	}
	if n := e.count(`SELECT count(*) FROM audit_events WHERE run_id = $1 AND tool = 'side_effect' AND approval_id = $2
		AND action = 'tool_call' AND outcome = 'ok' AND kind = 'native' AND args_digest LIKE 'sha256:%' AND actor = 'agent:' || $3`, id, req.ID, e.agent); n != 1 {
		t.Error("the approved call's audit event does not name its approval")
	}
	// The request's life: proposed, approved by the operator, executed,
	// returned (the call's own event between the last two).
	if got := e.lifecycle(id); got != "proposed by agent, approved by operator, executed by agent, tool_call ok, returned by agent" {
		t.Errorf("audit trail: %s", got)
	}
	// The transcript shows the wait: who approved, after how long.
	tr := transcript(t, e, id)
	for _, c := range tr.ToolCalls {
		var meta map[string]any
		_ = json.Unmarshal(c.Metadata, &meta)
		if c.Tool == "side_effect" && (meta["approval_id"] != req.ID || meta["approved_by"] != "Ann" || meta["waited"] == nil) {
			t.Errorf("the approved call's metadata: %s", c.Metadata)
		}
	}
}

func TestADenialReachesTheModelAndNothingRuns(t *testing.T) {
	t.Parallel()
	gate := &askGate{version: "p1:one"}
	e := newEnv(t, envOptions{approvals: gate}, turn{Calls: []call{{"add", `{"a":500,"b":1}`}}}, turn{Text: "understood"})
	id := e.start("add big numbers", 10)
	req := e.pending(id, 1)
	e.decide(id, req.ID, approvals.Decision{UserName: "Ann", Reason: "not above ten"})
	if _, err := e.wait(id, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	tr := transcript(t, e, id)
	if len(tr.ToolCalls) != 1 || tr.ToolCalls[0].Outcome != runs.OutcomeDenied ||
		!strings.Contains(tr.ToolCalls[0].Result, "denied by Ann: not above ten") {
		t.Fatalf("tool calls = %+v", tr.ToolCalls)
	}
	if n := e.count(`SELECT count(*) FROM audit_events WHERE run_id = $1 AND tool = 'add' AND outcome = 'denied'
		AND action = 'tool_call'`, id); n != 1 {
		t.Error("the denied call left no audit event")
	}
	if got := e.lifecycle(id); got != "proposed by agent, denied by operator, tool_call denied" {
		t.Errorf("audit trail: %s", got)
	}
	read := false
	for _, m := range e.model.Requests()[1].Messages {
		read = read || (m.Role == "tool" && strings.Contains(m.Content, "denied by Ann: not above ten"))
	}
	if !read {
		t.Error("the model did not read the denial")
	}
}

func TestAPolicyChangedWhileWaitingAsksAgain(t *testing.T) {
	t.Parallel()
	gate := &askGate{version: "p1:one"}
	e := newEnv(t, envOptions{approvals: gate}, turn{Calls: []call{{"side_effect", `{}`}}}, turn{Text: "done"})
	id := e.start("do it", 10)
	first := e.pending(id, 1)
	gate.setVersion("p1:two")
	e.decide(id, first.ID, approvals.Decision{Approve: true, UserName: "Ann"})
	second := e.pending(id, 2)
	if second.ID == first.ID || second.PolicyVersion != "p1:two" {
		t.Fatalf("second request = %+v", second)
	}
	if n := e.count(`SELECT count(*) FROM test_executions`); n != 0 {
		t.Fatal("an approval given under the old policy ran the call")
	}
	e.decide(id, second.ID, approvals.Decision{Approve: true, UserName: "Ann"})
	if _, err := e.wait(id, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := e.count(`SELECT count(*) FROM test_executions`); n != 1 {
		t.Fatalf("side_effect ran %d times", n)
	}
}

func TestAnUnansweredRequestExpiresAsADenial(t *testing.T) {
	t.Parallel()
	gate := &askGate{version: "p1:one", wait: 2 * time.Second}
	e := newEnv(t, envOptions{approvals: gate}, turn{Calls: []call{{"side_effect", `{}`}}}, turn{Text: "gave up"})
	id := e.start("do it", 10)
	if _, err := e.wait(id, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	tr := transcript(t, e, id)
	if len(tr.ToolCalls) != 1 || tr.ToolCalls[0].Outcome != runs.OutcomeDenied || !strings.Contains(tr.ToolCalls[0].Result, "nobody approved this call") {
		t.Fatalf("tool calls = %+v", tr.ToolCalls)
	}
	if n := e.count(`SELECT count(*) FROM approval_requests WHERE run_id = $1 AND state = 'expired'`, id); n != 1 {
		t.Error("the request is not expired")
	}
	if got := e.runStatus(id); got != runs.StatusCompleted {
		t.Errorf("status %s", got)
	}
}

func TestCancellingAWaitingRunWithdrawsItsRequest(t *testing.T) {
	t.Parallel()
	gate := &askGate{version: "p1:one"}
	e := newEnv(t, envOptions{approvals: gate}, turn{Calls: []call{{"side_effect", `{}`}}})
	id := e.start("do it", 10)
	req := e.pending(id, 1)
	if err := e.c.CancelWorkflow(context.Background(), run.WorkflowID(id), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.wait(id, 2*time.Minute); err == nil {
		t.Fatal("a cancelled run ended without error")
	}
	if got := e.runStatus(id); got != runs.StatusCancelled {
		t.Errorf("status %s", got)
	}
	if _, err := approvals.Decide(context.Background(), e.db, req.ID, nil, approvals.Decision{Approve: true}); err == nil {
		t.Error("a cancelled run's request could still be approved")
	}
}

// dbGate is the platform's PolicyGate on the env's database, set once the
// env exists.
type dbGate struct{ db *pgxpool.Pool }

func (g *dbGate) Need(ctx context.Context, r runs.Run, offered runs.OfferedTool, args json.RawMessage) (*runact.ApprovalNeed, error) {
	return runact.PolicyGate{DB: g.db}.Need(ctx, r, offered, args)
}

func TestSavedPoliciesAskAndStopAskingHoldsForTheRun(t *testing.T) {
	t.Parallel()
	gate := &dbGate{}
	e := newEnv(t, envOptions{approvals: gate},
		turn{Calls: []call{{"add", `{"a":50,"b":1}`}}},
		turn{Calls: []call{{"add", `{"a":60,"b":1}`}, {"add", `{"a":1,"b":1}`}}},
		turn{Text: "summed"})
	gate.db = e.db
	types := approvals.ArgTypes(json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}}}`))
	if _, err := approvals.Save(context.Background(), e.db, approvals.Setting{Scope: approvals.ScopeGuild, ScopeID: e.guild, Tool: "add", Ask: true,
		Policy: approvals.Policy{Rules: []approvals.Rule{{Arg: "a", Op: approvals.OpGreater, Value: "10"}}}}, types); err != nil {
		t.Fatal(err)
	}
	id := e.start("sum things", 10)
	req := e.pending(id, 1)
	if req.AskedBecause != "the guild asks when a gt 10" {
		t.Errorf("asked because %q", req.AskedBecause)
	}
	e.decide(id, req.ID, approvals.Decision{Approve: true, UserName: "Ann", StopAsking: true})
	if _, err := e.wait(id, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := e.count(`SELECT count(*) FROM approval_requests WHERE run_id = $1`, id); n != 1 {
		t.Errorf("%d requests: stop asking did not hold for the rest of the run", n)
	}
	if n := e.count(`SELECT count(*) FROM tool_calls WHERE run_id = $1 AND outcome = 'ok'`, id); n != 3 {
		t.Errorf("%d calls ran", n)
	}
}

// The wait holds no worker: the worker stops while the run waits, the
// operator answers, and a worker started later runs the call, once.
func TestARunWaitsWithNoWorkerUp(t *testing.T) {
	t.Parallel()
	gate := &askGate{version: "p1:one"}
	e := newEnv(t, envOptions{noWorker: true}, turn{Calls: []call{{"side_effect", `{}`}}}, turn{Text: "done"})
	startWorker := func() sdkworker.Worker {
		a, closeMCP := activitiesWith(e.db, e.gate, e.model.URL, e.mcpURL, "", slog.New(slog.DiscardHandler), false,
			func(d *runact.Deps) { d.Approvals = gate })
		w := sdkworker.New(e.c, e.queue, sdkworker.Options{})
		run.Register(w, a)
		if err := w.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(closeMCP)
		return w
	}
	first := startWorker()
	id := e.start("do it", 10)
	req := e.pending(id, 1)
	first.Stop()
	e.decide(id, req.ID, approvals.Decision{Approve: true, UserName: "Ann"})
	if n := e.count(`SELECT count(*) FROM test_executions`); n != 0 {
		t.Fatal("the call ran with no worker up")
	}
	second := startWorker()
	t.Cleanup(second.Stop)
	if _, err := e.wait(id, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	if n := e.count(`SELECT count(*) FROM test_executions WHERE tool = 'side_effect'`); n != 1 {
		t.Fatalf("side_effect ran %d times", n)
	}
	if n := e.count(`SELECT count(*) FROM tool_calls WHERE run_id = $1 AND metadata->>'approval_id' = $2`, id, req.ID); n != 1 {
		t.Error("the call does not name the approval it ran under")
	}
}
