package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
)

// hangingAcme is acmeServer's echo beside a tool that never answers until
// the test ends (release closed).
func hangingAcme(release <-chan struct{}) *server.MCPServer {
	s := acmeServer()
	s.AddTool(mcp.NewTool("hang", mcp.WithDescription("Never answers")),
		func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			select {
			case <-ctx.Done():
			case <-release:
			}
			return mcp.NewToolResultText("too late"), nil
		})
	return s
}

// auditRow is what the audit view and export show of an event.
type auditRow struct {
	Action       string `json:"action"`
	Tool         string `json:"tool"`
	Kind         string `json:"kind"`
	Outcome      string `json:"outcome"`
	ConnectionID string `json:"connection_id"`
	LoginScope   string `json:"login_scope"`
	ArgsDigest   string `json:"args_digest"`
	ApprovalID   string `json:"approval_id"`
	RunID        string `json:"run_id"`
}

// TestDeployedAuditTrail: one run of a production-shaped install leaves an
// audit row for each way a call can go. A native tool and an OAuth login's
// tool run (ok), a call the organisation's operator denies through the API
// (denied, with its approval), a call whose server never answers within the
// catalog entry's bound (timed_out), and a call past the agent's daily
// budget of three calls, reached mid-run (refused; the run stops and a new
// run is refused with 429). The export equals the view for the same filter,
// and an operator of another organisation sees none of the rows.
func TestDeployedAuditTrail(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes")
	}
	as := oauthtest.New(t)
	as.EmailDomain = "acme.test"
	release := make(chan struct{})
	rs := as.Protect(t, "/mcp", server.NewStreamableHTTPServer(hangingAcme(release), server.WithStateful(true)), nil)
	t.Cleanup(func() { close(release) }) // before the server closes: its Close waits for the hanging call
	model := newScriptedModel(t, boxModelKey,
		[]toolCall{{"note_write", map[string]any{"level": "agent", "key": "todo.md", "content": "buy milk"}},
			{"acme_echo", map[string]any{"text": "from the run"}}},
		[]toolCall{{"note_delete", map[string]any{"path": "agent/todo.md"}}},
		[]toolCall{{"acme_hang", map[string]any{}}},
		[]toolCall{{"note_get", map[string]any{"path": "agent/todo.md"}}},
		nil)
	d := deploy(t, map[string]string{"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL})

	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Ops"})["id"].(string)
	agent := d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Scribe"})["id"].(string)
	ann := d.must(201, "POST", "/api/users", map[string]any{"name": "ann", "organisation_id": org})["token"].(string)
	rival := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Rival"})["id"].(string)
	rex := d.must(201, "POST", "/api/users", map[string]any{"name": "rex", "organisation_id": rival})["token"].(string)

	// The bound is wide enough for echo on a loaded machine; hang never answers.
	connID := connectAcmeWith(t, d, rs.URL+"/mcp", org, map[string]any{"call_timeout_seconds": 10})
	d.must(200, "PUT", "/api/approval-policies", map[string]any{"scope": "organisation", "scope_id": org,
		"tool": "note_delete", "ask": true, "wait": "48h"})
	if r := d.callAs(ann, "PUT", "/api/agents/"+agent+"/budgets", map[string]any{"tool_calls_per_day": 3}); r.Status != 200 {
		t.Fatalf("the agent's budget: %d %s", r.Status, r.Body)
	}

	runID := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Tidy the notes, then ask Acme."})["id"].(string)
	asked := d.awaitRequest(runID, "")
	if asked.Tool != "note_delete" {
		t.Fatalf("the run asks about %s", asked.Tool)
	}
	if r := d.callAs(ann, "POST", "/api/approvals/"+asked.ID, map[string]any{"decision": "deny", "reason": "keep it"}); r.Status != 200 {
		t.Fatalf("deny: %d %s", r.Status, r.Body)
	}
	transcript := d.waitRun(runID)
	var got struct {
		Run struct {
			StopReason string `json:"stop_reason"`
		} `json:"run"`
	}
	if err := json.Unmarshal([]byte(transcript), &got); err != nil || !strings.HasPrefix(got.Run.StopReason, "budget_reached:") ||
		!strings.Contains(got.Run.StopReason, "3 tool calls per day") {
		t.Errorf("the run did not stop on its budget: %q %v", got.Run.StopReason, err)
	}

	// A new run is refused, naming the limit; nothing is stored.
	r := d.Call("POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Once more."})
	var refusal struct {
		Error struct {
			Code   string `json:"code"`
			Budget struct {
				Scope, Limit string
				Used         float64
			} `json:"budget"`
		} `json:"error"`
	}
	if err := json.Unmarshal(r.Body, &refusal); err != nil || r.Status != 429 || refusal.Error.Code != "budget_reached" ||
		refusal.Error.Budget.Scope != "agent" || refusal.Error.Budget.Limit != "tool_calls_per_day" || refusal.Error.Budget.Used != 3 {
		t.Errorf("a start over budget: %d %s", r.Status, r.Body)
	}

	// The organisation's operator reads one row per call.
	const filter = "?action=tool_call&run_id="
	view := d.callAs(ann, "GET", "/api/orgs/"+org+"/audit"+filter+runID, nil)
	var rows []auditRow
	if view.Status != 200 || json.Unmarshal(view.Body, &rows) != nil {
		t.Fatalf("the audit view: %d %s", view.Status, view.Body)
	}
	want := map[string]auditRow{
		"note_write":  {Kind: "native", Outcome: "ok"},
		"acme_echo":   {Kind: "mcp", Outcome: "ok", ConnectionID: connID, LoginScope: "organisation"},
		"note_delete": {Kind: "native", Outcome: "denied", ApprovalID: asked.ID},
		"acme_hang":   {Kind: "mcp", Outcome: "timed_out", ConnectionID: connID, LoginScope: "organisation"},
		"note_get":    {Kind: "native", Outcome: "refused"},
	}
	if len(rows) != len(want) {
		t.Errorf("%d tool_call rows, want %d: %s", len(rows), len(want), view.Body)
	}
	for _, row := range rows {
		w, ok := want[row.Tool]
		delete(want, row.Tool)
		if !ok || row.Kind != w.Kind || row.Outcome != w.Outcome || row.ConnectionID != w.ConnectionID ||
			row.LoginScope != w.LoginScope || row.ApprovalID != w.ApprovalID || row.ArgsDigest == "" {
			t.Errorf("the row of %s: %+v, want %+v with a digest", row.Tool, row, w)
		}
	}
	if len(want) != 0 {
		t.Errorf("no row for %v", want)
	}

	// The export for the same filter holds the view's rows, in its order.
	export := d.callAs(ann, "GET", "/api/orgs/"+org+"/audit/export"+filter+runID, nil)
	var lines []json.RawMessage
	sc := bufio.NewScanner(bytes.NewReader(export.Body))
	for sc.Scan() {
		lines = append(lines, append(json.RawMessage(nil), sc.Bytes()...))
	}
	var viewed []json.RawMessage
	_ = json.Unmarshal(view.Body, &viewed)
	if export.Status != 200 || len(lines) != len(viewed) {
		t.Fatalf("export: %d, %d lines for %d rows\n%s", export.Status, len(lines), len(viewed), export.Body)
	}
	for i := range lines {
		if !sameJSON(lines[i], string(viewed[i])) {
			t.Errorf("export line %d: %s, view: %s", i, lines[i], viewed[i])
		}
	}

	// An operator of another organisation sees none of it.
	for _, path := range []string{"/api/orgs/" + org + "/audit", "/api/orgs/" + org + "/audit/export", "/api/admin/audit" + filter + runID} {
		if r := d.callAs(rex, "GET", path, nil); r.Status != 403 && r.Status != 404 {
			t.Errorf("an operator of another organisation read %s: %d %s", path, r.Status, r.Body)
		}
	}
	for _, path := range []string{"/api/orgs/" + rival + "/audit", "/api/orgs/" + rival + "/audit/export"} {
		if r := d.callAs(rex, "GET", path, nil); r.Status != 200 || strings.Contains(string(r.Body), runID) ||
			strings.Contains(string(r.Body), org) {
			t.Errorf("%s shows the other organisation's rows: %d %s", path, r.Status, r.Body)
		}
	}
	// The instance admin sees the same rows.
	if r := d.Call("GET", "/api/admin/audit"+filter+runID, nil); r.Status != 200 || !sameJSON(r.Body, string(view.Body)) {
		t.Errorf("the admin's view differs: %d %s", r.Status, r.Body)
	}
}
