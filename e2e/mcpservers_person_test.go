package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPublishedServerFormGoesToAnOperator drives the reference server
// (server-everything, at the version e2e/mcpservers pins) over Streamable
// HTTP from the deployed platform, its catalog row sending forms to a
// person: a run calls its elicitation tool, the run reads waiting, the
// operator finds the server's form in the run's inputs and answers it
// through the API, and the server's result holds the answer. The same run
// then calls its task tool (simulate-research-query), which that version
// runs only as a task of revision 2025-11-25: the call asks for one, and
// the run follows it to its report. Asked again with an ambiguous topic,
// the task stops for a clarification that the server sends only on a
// tasks/result stream: the operator answers it from the inbox and the
// report is shaped by the answer. A second run does the same on a row with
// a short wait that nobody answers in: the form expires, the server is told
// "decline", and the report says so.
func TestPublishedServerFormGoesToAnOperator(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform and a published MCP server as processes")
	}
	s := needSuite(t)
	port := freePort(t)
	logs := startServerProcess(t, port, []string{"PORT=" + strconv.Itoa(port)},
		s.node, s.bin("@modelcontextprotocol/server-everything", "dist/index.js"), "streamableHttp")
	url := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)

	model := newScriptedModel(t, boxModelKey,
		[]toolCall{{"everyform_trigger-elicitation-request", map[string]any{}}},
		[]toolCall{{"everyform_simulate-research-query", map[string]any{"topic": "tides"}}},
		[]toolCall{{"everyform_simulate-research-query", map[string]any{"topic": "python", "ambiguous": true}}},
		nil,
		// The second run's.
		[]toolCall{{"everylate_simulate-research-query", map[string]any{"topic": "tides", "ambiguous": true}}},
		nil)
	d := deploy(t, map[string]string{"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL})
	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Harbour"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Berths"})["id"].(string)
	agent := d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Clerk"})["id"].(string)
	ann := d.must(201, "POST", "/api/users", map[string]any{"name": "ann", "organisation_id": org})["token"].(string)

	row := httpRow("everyform", url)
	row["config"] = map[string]any{"elicitation": "person", "input_wait_seconds": 600}
	d.must(201, "POST", "/api/admin/mcp/servers", row)
	makeUsable(t, d, publishedServer{slug: "everyform"}, org)
	late := httpRow("everylate", url)
	late["config"] = map[string]any{"elicitation": "person", "input_wait_seconds": 2}
	d.must(201, "POST", "/api/admin/mcp/servers", late)
	makeUsable(t, d, publishedServer{slug: "everylate"}, org)

	runID := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Register me."})["id"].(string)
	form := d.awaitInput(runID)
	if !strings.Contains(string(form.Schema), `"name"`) || !strings.Contains(string(form.Schema), `"untitledMultipleSelectEnum"`) {
		t.Errorf("the form's schema: %s", form.Schema)
	}
	// The instance admin is not an operator of the organisation.
	if r := d.Call("POST", "/api/inputs/"+form.ID, map[string]any{"action": "decline"}); r.Status != 403 && r.Status != 404 {
		t.Errorf("the instance admin answered the form: %d %s", r.Status, r.Body)
	}
	// One the schema refuses (integer out of range) is refused, the form stays open.
	if r := d.callAs(ann, "POST", "/api/inputs/"+form.ID, map[string]any{"action": "accept",
		"content": map[string]any{"name": "Ann Tide", "integer": 500}}); r.Status != 422 {
		t.Errorf("an answer out of the schema: %d %s", r.Status, r.Body)
	}
	if r := d.callAs(ann, "POST", "/api/inputs/"+form.ID, map[string]any{"action": "accept", "content": map[string]any{
		"name": "Ann Tide", "check": true, "integer": 7, "untitledMultipleSelectEnum": []any{"Piano", "Bass"}}}); r.Status != 200 {
		t.Fatalf("the operator's answer: %d %s", r.Status, r.Body)
	}

	// The ambiguous research task asks for a clarification: the same inbox,
	// the server's own choices.
	clarify := d.awaitInput(runID)
	if !strings.Contains(clarify.Message, `"python" could have multiple interpretations`) ||
		!strings.Contains(string(clarify.Schema), `"snake"`) || !strings.Contains(string(clarify.Schema), `"interpretation"`) {
		t.Errorf("the task's form: %q %s", clarify.Message, clarify.Schema)
	}
	if r := d.callAs(ann, "POST", "/api/inputs/"+clarify.ID, map[string]any{"action": "accept",
		"content": map[string]any{"interpretation": "lizard"}}); r.Status != 422 {
		t.Errorf("a choice the server did not offer: %d %s", r.Status, r.Body)
	}
	if r := d.callAs(ann, "POST", "/api/inputs/"+clarify.ID, map[string]any{"action": "accept",
		"content": map[string]any{"interpretation": "snake"}}); r.Status != 200 {
		t.Fatalf("the operator's clarification: %d %s", r.Status, r.Body)
	}

	transcript := d.waitRun(runID)
	results := callResults(t, transcript)
	got := strings.Join(results["everyform_trigger-elicitation-request"], "\n")
	for _, want := range []string{"ok: ", "User provided the requested information", "- Name: Ann Tide", "- Favorite Integer: 7"} {
		if !strings.Contains(got, want) {
			t.Errorf("the form's call: %q lacks %q", got, want)
		}
	}
	research := results["everyform_simulate-research-query"]
	if len(research) != 2 {
		t.Fatalf("%d research calls, want 2: %v", len(research), research)
	}
	// The task tool: the call asks for a task (the tool requires one), the
	// run follows it on durable timers (tasks/get, then tasks/result) and
	// the report is the call's result.
	for _, want := range []string{"ok: ", "# Research Report: tides", "`working` → `completed`"} {
		if !strings.Contains(research[0], want) {
			t.Errorf("the task's call: %q lacks %q", research[0], want)
		}
	}
	// The ambiguous one went through input_required with the operator's answer.
	for _, want := range []string{"ok: ", "# Research Report: python (snake)", "- **Clarification**: snake",
		"`working` → `input_required` → `working` → `completed`"} {
		if !strings.Contains(research[1], want) {
			t.Errorf("the clarified task's call: %q lacks %q", research[1], want)
		}
	}
	if n := d.count(t, `SELECT count(*) FROM run_tasks WHERE run_id = '`+runID+`' AND status = 'completed'`); n != 2 {
		t.Errorf("%d followed tasks completed, want 2", n)
	}

	// Nobody answers within the row's 2 s: the form expires and the server
	// is told "decline", which its report states.
	lateRun := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Research tides."})["id"].(string)
	lateTranscript := d.waitRun(lateRun)
	lateResearch := callResults(t, lateTranscript)["everylate_simulate-research-query"]
	if len(lateResearch) != 1 || !strings.HasPrefix(lateResearch[0], "ok: ") ||
		!strings.Contains(lateResearch[0], "# Research Report: tides (User declined - using default interpretation)") {
		t.Errorf("the unanswered task's call: %q", lateResearch)
	}
	var lateInputs []inputRequest
	if r := d.Call("GET", "/api/runs/"+lateRun+"/inputs", nil); json.Unmarshal(r.Body, &lateInputs) != nil ||
		len(lateInputs) != 1 || lateInputs[0].State != "expired" || !strings.Contains(lateInputs[0].Message, `"tides"`) {
		t.Errorf("the unanswered form: %d %s", r.Status, r.Body)
	}
	// What the model read at its next turns is those results.
	for _, want := range []string{"# Research Report: python (snake)", "# Research Report: tides (User declined - using default interpretation)"} {
		if !strings.Contains(model.Received(), want) {
			t.Errorf("the model was not sent %q", want)
		}
	}
	if t.Failed() {
		t.Logf("transcripts:\n%s\n%s\nserver:\n%s\nplatform:\n%s", transcript, lateTranscript, logs, d.Logs())
	}
}

// callResults reads a run's transcript: each tool's results, in call order,
// as "outcome: result".
func callResults(t *testing.T, transcript string) map[string][]string {
	t.Helper()
	tr := transcriptOf(t, transcript)
	results := map[string][]string{}
	for _, c := range tr.ToolCalls {
		results[c.Tool] = append(results[c.Tool], c.Outcome+": "+c.Result)
	}
	return results
}

// inputRequest is a server's form as GET /api/runs/:id/inputs lists it.
type inputRequest struct {
	ID      string          `json:"id"`
	State   string          `json:"state"`
	Message string          `json:"message"`
	Schema  json.RawMessage `json:"requested_schema"`
}

// awaitInput waits for the run to be waiting on a pending server form and
// returns it, reading the API again at each notification of the run's
// events, never on a clock.
func (d *deployment) awaitInput(runID string) inputRequest {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a failure bound
	defer cancel()
	conn, err := pgx.Connect(ctx, d.vars["DATABASE_URL"])
	if err != nil {
		d.t.Fatal(err)
	}
	defer func() { _ = conn.Close(context.WithoutCancel(ctx)) }()
	if _, err := conn.Exec(ctx, "LISTEN guilds_run_events"); err != nil {
		d.t.Fatal(err)
	}
	for {
		run := d.must(200, "GET", "/api/runs/"+runID, nil)["run"].(map[string]any)
		switch run["status"] {
		case "waiting":
			var reqs []inputRequest
			r := d.Call("GET", "/api/runs/"+runID+"/inputs", nil)
			if err := json.Unmarshal(r.Body, &reqs); err != nil {
				d.t.Fatalf("inputs of the run: %d %s", r.Status, r.Body)
			}
			for _, q := range reqs {
				if q.State == "pending" {
					return q
				}
			}
		case "completed", "failed", "cancelled":
			d.t.Fatalf("the run ended (%s) instead of waiting\n%s", run["status"], d.Logs())
		}
		if _, err := conn.WaitForNotification(ctx); err != nil {
			d.t.Fatalf("run %s did not wait for a form: %v\n%s", runID, err, d.Logs())
		}
	}
}
