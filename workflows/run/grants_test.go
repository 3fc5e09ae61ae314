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
	sdkworker "go.temporal.io/sdk/worker"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/workflows/run"
)

var platformAdmin = access.Principal{Admin: true}

// putBinding turns a native tool on or off for the env's agent.
func (e *env) putBinding(tool string, on bool) error {
	_, err := bindings.PutBinding(context.Background(), e.db, platformAdmin, grants.BindingInput{Scope: grants.ScopeAgent,
		ScopeID: e.agent, CatalogKind: grants.KindNativeTool, CatalogID: tool, Enabled: &on})
	return err
}

// startGrantsWorker runs the production offer path: grants.Service over the
// platform's native registry and the seeded bindings, with a connected
// notion login at the guild whose listed tool is served by the test MCP peer.
func (e *env) startGrantsWorker() {
	e.t.Helper()
	ctx := context.Background()
	if err := grants.Seed(ctx, e.db, grantstest.Registry()); err != nil {
		e.t.Fatal(err)
	}
	c, _, err := connections.Connect(ctx, e.db, platformAdmin, nil, connections.ConnectInput{Slug: "notion",
		OwnerScope: grants.ScopeGuild, OwnerID: e.guild})
	if err != nil {
		e.t.Fatal(err)
	}
	if err := connections.MarkConnected(ctx, e.db, c.ID, "@acme"); err != nil {
		e.t.Fatal(err)
	}
	if err := grants.SyncListedTools(ctx, e.db, c.ID, []grants.ListedTool{{Name: "lookup",
		Description: "Look a page up", Schema: mcpSchema}}); err != nil {
		e.t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	reg := native.Registry(e.db, log)
	caller := &mcpCaller{url: e.mcpURL + "/mcp"}
	offerer := runact.GrantsOfferer{S: grants.NewService(reg, integrations.New(func(string) string { return "" }), log)}
	a := runact.New(runact.Deps{DB: e.db, Tools: reg, Offerer: offerer, MCP: caller,
		Secrets: fixedSecrets{mcpSecret, boxKey}, Models: e.res, Log: log, Heartbeat: 200 * time.Millisecond})
	w := sdkworker.New(e.c, e.queue, sdkworker.Options{})
	run.Register(w, a)
	if err := w.Start(); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { w.Stop(); caller.Close() })
}

func offeredNames(req chatRequest) map[string]bool {
	out := map[string]bool{}
	for _, t := range req.Tools {
		out[t.Function.Name] = true
	}
	return out
}

// A run over the production offer path: the seeded platform bindings offer
// the note, record and memory tools, an agent binding turns note_find off,
// the agent's flags keep the browser tools out, the guild's notion login
// offers its listed tool, report_issue is always there. Real handlers write
// real rows; an operator turning a tool off mid-run takes it away from the
// following turns and refuses a call to it; the Temporal UI can find the run
// by its search attributes and read the tool names on its activities.
func TestRunOverRealGrants(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{noWorker: true})
	e.startGrantsWorker()
	if err := e.putBinding("note_find", false); err != nil {
		t.Fatal(err)
	}
	e.model.script = []turn{
		{Text: "working", Calls: []call{
			{"note_write", `{"level":"agent","key":"plan.md","content":"ship the release on friday"}`},
			{"memory_write", `{"content":"the release ships on friday"}`},
			{"notion_lookup", `{"query":"roadmap"}`},
			{"note_find", `{}`},
			{"browser_navigate", `{"url":"https://example.com"}`},
			{"report_issue", `{"kind":"api","summary":"notion was slow"}`},
		}},
	}
	e.model.repeat = func(n int) turn {
		switch n {
		case 1:
			// The operator turns note_get off while the model is thinking: the
			// call below was asked for by a turn that still offered it.
			if err := e.putBinding("note_get", false); err != nil {
				t.Errorf("turn note_get off: %v", err)
			}
			return turn{Calls: []call{{"note_get", `{"path":"agent/plan.md"}`}, {"note_write", `{"level":"agent","key":"done.md","content":"read the plan"}`}}}
		default:
			return turn{Text: "done"}
		}
	}
	id := e.start("plan the release", 20)
	res, err := e.wait(id, 2*time.Minute)
	if err != nil {
		t.Fatalf("run failed: %v", err)
	}
	if res.Status != runs.StatusCompleted || res.Text != "done" || res.Remaining != 12 {
		t.Fatalf("result = %+v", res)
	}

	reqs := e.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model requests = %d", len(reqs))
	}
	first := offeredNames(reqs[0])
	for _, n := range []string{"note_write", "note_get", "note_delete", "record_add", "record_list", "memory_write", "report_issue", "notion_lookup"} {
		if !first[n] {
			t.Errorf("%s not offered: %v", n, first)
		}
	}
	for _, n := range []string{"note_find", "browser_navigate", "browser_snapshot"} {
		if first[n] {
			t.Errorf("%s offered", n)
		}
	}
	if last := offeredNames(reqs[2]); last["note_get"] || !last["note_write"] || !last["report_issue"] || !last["notion_lookup"] {
		t.Errorf("the turn after note_get was turned off offers %v", last)
	}

	tr := transcript(t, e, id)
	want := []struct{ tool, outcome, contains string }{
		{"note_write", runs.OutcomeOK, ""},
		{"memory_write", runs.OutcomeOK, ""},
		{"notion_lookup", runs.OutcomeOK, `page for "roadmap"`},
		{"note_find", runs.OutcomeRefused, `unknown tool "note_find"`},
		{"browser_navigate", runs.OutcomeRefused, `unknown tool "browser_navigate"`},
		{"report_issue", runs.OutcomeOK, "filed issue"},
		{"note_get", runs.OutcomeRefused, `unknown tool "note_get"`},
		{"note_write", runs.OutcomeOK, ""},
	}
	if len(tr.ToolCalls) != len(want) {
		t.Fatalf("tool calls = %d", len(tr.ToolCalls))
	}
	for i, w := range want {
		tc := tr.ToolCalls[i]
		if tc.Tool != w.tool || tc.Outcome != w.outcome || !strings.Contains(tc.Result, w.contains) {
			t.Errorf("call %d = %s %s %q; want %s %s containing %q", i, tc.Tool, tc.Outcome, tc.Result, w.tool, w.outcome, w.contains)
		}
		if strings.Contains(tc.Result, mcpSecret) {
			t.Errorf("call %d result holds the credential", i)
		}
	}
	if n := e.count(`SELECT count(*) FROM memory WHERE agent_id = $1 AND content = 'the release ships on friday'`, e.agent); n != 1 {
		t.Errorf("memory rows = %d", n)
	}
	if n := e.count(`SELECT count(*) FROM tooling_issues WHERE run_id = $1 AND kind = 'api'`, id); n != 1 {
		t.Errorf("tooling issues = %d", n)
	}
	snap, err := runs.SnapshotOf(context.Background(), e.db, id)
	if err != nil {
		t.Fatal(err)
	}
	if mw, ok := snap.Tool("memory_write"); !ok || !mw.Idempotent || !snap.Flags.Memory || snap.Flags.Browser {
		t.Errorf("snapshot memory_write %+v (idempotent from the registry), flags %+v", mw, snap.Flags)
	}
	if nl, ok := snap.Tool("notion_lookup"); !ok || nl.Kind != "mcp" || nl.Class != string(tools.ClassMCP) || nl.Idempotent {
		t.Errorf("snapshot notion_lookup = %+v", nl)
	}

	// The Temporal UI: memo, search attributes, a summary naming each tool.
	desc, err := e.c.DescribeWorkflow(context.Background(), run.WorkflowID(id), "")
	if err != nil {
		t.Fatal(err)
	}
	info := desc.RawResponse.WorkflowExecutionInfo
	var agentName string
	if p := info.GetMemo().GetFields()["agent"]; p == nil || json.Unmarshal(p.GetData(), &agentName) != nil || agentName != "scout" {
		t.Errorf("memo agent = %q", agentName)
	}
	sa := info.GetSearchAttributes().GetIndexedFields()
	for key, want := range map[string]string{"GuildsOrganisation": e.org, "GuildsGuild": e.guild, "GuildsAgent": e.agent, "GuildsTrigger": "direct"} {
		var got string
		if p := sa[key]; p == nil || json.Unmarshal(p.GetData(), &got) != nil || got != want {
			t.Errorf("search attribute %s = %q, want %q", key, got, want)
		}
	}
	// Fairness between organisations (docs/adr/0519): the organisation is
	// the fairness key and a direct run goes first.
	if p := info.GetPriority(); p.GetFairnessKey() != e.org || p.GetPriorityKey() != 1 {
		t.Errorf("priority = %v, want fairness key %s and priority 1", p, e.org)
	}
	summaries := map[string]bool{}
	for _, ev := range fetchHistory(t, e, id).GetEvents() {
		// Quick tools run as local activities, recorded as markers.
		if t := ev.GetEventType(); t != enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED && t != enums.EVENT_TYPE_MARKER_RECORDED {
			continue
		}
		var s string
		if p := ev.GetUserMetadata().GetSummary(); p != nil && json.Unmarshal(p.GetData(), &s) == nil {
			summaries[s] = true
		}
	}
	for _, s := range []string{"tool note_write", "tool notion_lookup", "tool report_issue", "model turn 1"} {
		if !summaries[s] {
			t.Errorf("no activity summarised %q: %v", s, summaries)
		}
	}
	if h := historyBytes(t, e, id); bytes.Contains(h, []byte(mcpSecret)) || bytes.Contains(h, []byte(boxKey)) {
		t.Fatal("a credential value is in the workflow history")
	}
}

// bindings writes bindings as the API does, checking native tools against
// the catalog of every native family.
var bindings = grants.NewService(grantstest.Registry(), nil, nil)
