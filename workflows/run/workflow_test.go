package run_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/workflows/run"
)

var record = flag.Bool("record", false, "record workflow histories into testdata/ for the replay tests")

func transcript(t *testing.T, e *env, id string) runs.Transcript {
	t.Helper()
	r, err := runs.Load(context.Background(), e.db, id)
	if err != nil {
		t.Fatal(err)
	}
	tr := runs.Transcript{Run: r}
	if tr.Messages, err = runs.Messages(context.Background(), e.db, id, 0); err != nil {
		t.Fatal(err)
	}
	if tr.ToolCalls, err = runs.ToolCalls(context.Background(), e.db, id); err != nil {
		t.Fatal(err)
	}
	return tr
}

// historyBytes returns the run's workflow history in its wire encoding, where
// payloads are plain bytes (in JSON they would be base64 and hide a match).
func historyBytes(t *testing.T, e *env, id string) []byte {
	t.Helper()
	raw, err := proto.Marshal(fetchHistory(t, e, id))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// history returns the run's workflow history as JSON (the replayer's format).
func history(t *testing.T, e *env, id string) []byte {
	t.Helper()
	raw, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(fetchHistory(t, e, id))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func fetchHistory(t *testing.T, e *env, id string) *historypb.History {
	t.Helper()
	it := e.c.GetWorkflowHistory(context.Background(), run.WorkflowID(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	return h
}

func recordHistory(t *testing.T, e *env, id, name string) {
	if !*record {
		return
	}
	if err := os.WriteFile(filepath.Join("testdata", name), history(t, e, id), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The main path: a rate-limited first model request, then one turn calling
// a native tool, the MCP tool, an unknown name, bad arguments, malformed
// JSON, a failing handler and report_issue, all concurrently; then the answer.
func TestRunEndToEnd(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{},
		turn{Status: 429},
		turn{Text: "let me look", Calls: []call{
			{"echo", `{"text":"hi"}`},
			{"notion_lookup", `{"query":"roadmap","space":""}`},
			{"nope", `{}`},
			{"add", `{"a":"one","b":2}`},
			{"echo", `{"text":`},
			{"fail", `{}`},
			{"report_issue", `{"kind":"tool_failure","summary":"fail keeps failing","detail":"the upstream said no"}`},
		}},
		turn{Text: "all done"},
	)
	id := e.start("please look things up", 20)
	res, err := e.wait(id, 2*time.Minute)
	if err != nil {
		t.Fatalf("run failed: %v", err)
	}
	if res.Status != runs.StatusCompleted || res.Text != "all done" || res.Remaining != 13 {
		t.Fatalf("result = %+v", res)
	}
	tr := transcript(t, e, id)
	if tr.Run.Status != runs.StatusCompleted || tr.Run.Remaining != 13 || tr.Run.FinishedAt == nil {
		t.Fatalf("run row = %+v", tr.Run)
	}
	// user, assistant, 7 tool results, assistant
	if len(tr.Messages) != 10 || len(tr.ToolCalls) != 7 {
		t.Fatalf("messages %d, tool calls %d", len(tr.Messages), len(tr.ToolCalls))
	}
	want := []struct {
		tool, outcome, contains string
	}{
		{"echo", runs.OutcomeOK, "echo: hi"},
		{"notion_lookup", runs.OutcomeOK, `page for "roadmap" (space sent: false)`},
		{"nope", runs.OutcomeRefused, `unknown tool "nope"`},
		{"add", runs.OutcomeError, "ERROR: "},
		{"echo", runs.OutcomeError, "not valid JSON"},
		{"fail", runs.OutcomeError, "ERROR: the upstream said no"},
		{"report_issue", runs.OutcomeOK, "filed issue"},
	}
	for i, w := range want {
		tc := tr.ToolCalls[i]
		if tc.Seq != 3+i || tc.Tool != w.tool || tc.Outcome != w.outcome || !strings.Contains(tc.Result, w.contains) {
			t.Errorf("call %d = seq %d %s %s %q; want %s %s containing %q", i, tc.Seq, tc.Tool, tc.Outcome, tc.Result, w.tool, w.outcome, w.contains)
		}
		if !strings.HasSuffix(tc.Result, tools.TrailerKey+itoa(19-i)) {
			t.Errorf("call %d result lacks its trailer: %q", i, tc.Result)
		}
		if m := tr.Messages[2+i]; m.Role != runs.RoleTool || m.Content != tc.Result || m.ToolCallID != tc.CallID {
			t.Errorf("message %d = %+v does not match the call", 2+i, m)
		}
	}
	var meta map[string]any
	if err := json.Unmarshal(tr.ToolCalls[0].Metadata, &meta); err != nil || meta["exit_code"] != float64(0) || meta["kind"] != "native" ||
		strings.Contains(string(tr.ToolCalls[0].Metadata), mcpSecret) || !strings.Contains(fmt.Sprint(meta["seen"]), tools.RedactionMarker) {
		t.Errorf("handler metadata = %s (%v)", tr.ToolCalls[0].Metadata, err)
	}
	if mcp := tr.ToolCalls[1].Result; strings.Contains(mcp, mcpSecret) || !strings.Contains(mcp, tools.RedactionMarker) {
		t.Errorf("MCP result not redacted: %q", mcp)
	}
	if n := e.count(`SELECT count(*) FROM tooling_issues WHERE guild_id = $1 AND agent_id = $2 AND run_id = $3 AND kind = 'tool_failure' AND status = 'open'`,
		e.guild, e.agent, id); n != 1 {
		t.Errorf("tooling issues = %d", n)
	}

	reqs := e.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model requests = %d (429, turn, answer)", len(reqs))
	}
	if reqs[1].Auth != "Bearer "+boxKey || reqs[1].Model != "test-model" {
		t.Errorf("request auth/model = %q %q", reqs[1].Auth, reqs[1].Model)
	}
	offered := map[string]bool{}
	for _, tl := range reqs[1].Tools {
		offered[tl.Function.Name] = true
	}
	for _, n := range []string{"report_issue", "echo", "notion_lookup"} {
		if !offered[n] {
			t.Errorf("tool %s not offered: %v", n, offered)
		}
	}
	last := reqs[2]
	if len(last.Messages) != 10 || last.Messages[0].Role != "system" || last.Messages[9].Role != "tool" {
		t.Fatalf("last request messages = %d", len(last.Messages))
	}
	for _, m := range last.Messages {
		if strings.Contains(m.Content, mcpSecret) {
			t.Fatal("the model was sent a credential")
		}
	}

	h := historyBytes(t, e, id)
	if bytes.Contains(h, []byte(mcpSecret)) || bytes.Contains(h, []byte(boxKey)) {
		t.Fatal("a credential value is in the workflow history")
	}
	recordHistory(t, e, id, "end_to_end.json")
}

// A run whose only credentialed step is an MCP call: the workflow history,
// fetched from the server and searched byte for byte, never holds the secret,
// neither raw nor in the usual encodings a result could carry it in.
func TestNoCredentialInHistory(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{},
		turn{Calls: []call{{"notion_lookup", `{"query":"secret plans"}`}}},
		turn{Text: "found it"},
	)
	id := e.start("find the plans", 5)
	if _, err := e.wait(id, time.Minute); err != nil {
		t.Fatal(err)
	}
	h := historyBytes(t, e, id)
	for _, form := range []string{mcpSecret, boxKey, "7f3a9c21e4b8"} {
		if bytes.Contains(h, []byte(form)) {
			t.Fatalf("history holds %q", form)
		}
	}
	if !bytes.Contains(h, []byte("notion_lookup")) {
		t.Fatal("history does not name the tool (is it the right history?)")
	}
}

// The budget counts down across turns; a call past it is refused without
// running, the results near the end carry the wrap-up line, and the last
// turn offers no tools.
func TestBudget(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{},
		turn{Calls: []call{{"side_effect", `{}`}, {"noop", `{}`}}},
		turn{Calls: []call{{"noop", `{}`}, {"side_effect", `{}`}}},
		turn{Text: "wrapped up"},
	)
	id := e.start("use the tools", 3)
	res, err := e.wait(id, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runs.StatusCompleted || res.Text != "wrapped up" || res.Remaining != 0 {
		t.Fatalf("result %+v", res)
	}
	tr := transcript(t, e, id)
	if len(tr.ToolCalls) != 4 {
		t.Fatalf("tool calls = %d", len(tr.ToolCalls))
	}
	outcomes := []string{runs.OutcomeOK, runs.OutcomeOK, runs.OutcomeOK, runs.OutcomeRefused}
	trailers := []string{"Only 2 tool calls remain", "Only 1 tool call remains", "No tool calls remain", "No tool calls remain"}
	for i, tc := range tr.ToolCalls {
		if tc.Outcome != outcomes[i] || !strings.Contains(tc.Result, trailers[i]) {
			t.Errorf("call %d: %s %q", i, tc.Outcome, tc.Result)
		}
	}
	if n := e.count(`SELECT count(*) FROM test_executions WHERE tool = 'side_effect'`); n != 1 {
		t.Errorf("side_effect ran %d times; the call over budget must not run", n)
	}
	recordHistory(t, e, id, "budget.json")
	reqs := e.model.Requests()
	if len(reqs) != 3 || len(reqs[2].Tools) != 0 || len(reqs[1].Tools) == 0 {
		t.Fatalf("requests %d; last offers %d tools", len(reqs), len(reqs[len(reqs)-1].Tools))
	}
	if tr.Run.Remaining != 0 {
		t.Errorf("remaining = %d", tr.Run.Remaining)
	}
}

// Cancelling a run stops the tool call in flight and ends the run cancelled.
func TestCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{}, turn{Calls: []call{{"block", `{}`}}}, turn{Text: "never"})
	id := e.start("wait for the gate", 5)
	waitFor(t, func() bool { return e.count(`SELECT count(*) FROM test_executions WHERE tool = 'block'`) == 1 })
	if err := run.Cancel(context.Background(), e.c, id); err != nil {
		t.Fatal(err)
	}
	_, err := e.wait(id, time.Minute)
	var canceled *temporal.CanceledError
	if !errors.As(err, &canceled) {
		t.Fatalf("err = %v, want cancelled", err)
	}
	waitFor(t, func() bool {
		r, _ := runs.Load(context.Background(), e.db, id)
		return r.Status == runs.StatusCancelled
	})
}

// A disconnected enabled MCP server stops the run before any model call,
// with a clear message on the run.
func TestStartRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{agent: "disconnected"}, turn{Text: "never"})
	id := e.start("hello", 5)
	_, err := e.wait(id, time.Minute)
	if run.ErrorType(err) != run.ErrTypeStartRefused {
		t.Fatalf("err = %v", err)
	}
	r, _ := runs.Load(context.Background(), e.db, id)
	if r.Status != runs.StatusFailed || !strings.Contains(r.Error, "disconnected") {
		t.Fatalf("run = %+v", r)
	}
	if len(e.model.Requests()) != 0 {
		t.Fatal("the model was called")
	}
}

// A provider that refuses the request (4xx) fails the run without retries.
func TestModelRejected(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{}, turn{Status: 400})
	id := e.start("hello", 5)
	_, err := e.wait(id, time.Minute)
	if run.ErrorType(err) != run.ErrTypeModelRejected {
		t.Fatalf("err = %v", err)
	}
	if n := len(e.model.Requests()); n != 1 {
		t.Fatalf("requests = %d", n)
	}
	r, _ := runs.Load(context.Background(), e.db, id)
	if r.Status != runs.StatusFailed || !strings.Contains(r.Error, "400") || strings.Contains(r.Error, boxKey) {
		t.Fatalf("run = %+v", r)
	}
}

// With no key anywhere, a run does not start and nothing is stored.
func TestNoKeyRefusesStart(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{noKey: true, noWorker: true})
	_, err := run.Start(context.Background(), e.c, e.db, run.Input{AgentID: e.agent, Message: "hi", Models: e.res, TaskQueue: e.queue})
	if !errors.Is(err, models.ErrNoKey) {
		t.Fatalf("err = %v", err)
	}
	if n := e.count(`SELECT count(*) FROM runs`); n != 0 {
		t.Fatalf("runs = %d", n)
	}
}

// Many turns continue as new; the run ends with every call stored once.
func TestContinueAsNew(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	e.model.repeat = func(n int) turn {
		if n >= 30 {
			return turn{Text: "finished"}
		}
		return turn{Calls: []call{{"noop", `{}`}}}
	}
	id := e.start("loop", 100)
	res, err := e.wait(id, 3*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runs.StatusCompleted || res.Turns != 31 || res.Remaining != 70 {
		t.Fatalf("result %+v", res)
	}
	if n := e.count(`SELECT count(*) FROM tool_calls WHERE run_id = $1`, id); n != 30 {
		t.Fatalf("tool calls = %d", n)
	}
	desc, err := e.c.DescribeWorkflow(context.Background(), run.WorkflowID(id), "")
	if err != nil {
		t.Fatal(err)
	}
	if desc.RawResponse.WorkflowExecutionInfo.GetFirstRunId() == desc.RawResponse.WorkflowExecutionInfo.GetExecution().GetRunId() {
		t.Fatal("the run never continued as new")
	}
	recordHistory(t, e, id, "continued.json")
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within a minute")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
