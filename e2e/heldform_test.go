package e2e

import (
	"context"
	"fmt"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The stateless server's secret-looking state and the operator's note: the
// test checks neither ever reaches the run's Temporal history or the logs.
const (
	heldState = "basket 91c2: reserved under account acme-7781"
	heldNote  = "leave it with the harbour master"
)

// heldFormServer is a 2026-07-28 (stateless) mcp-go server whose "order"
// answers input_required with a form and its requestState, and completes
// when called again with the answer and that state. answered counts the
// calls that came back with an answer.
func heldFormServer(t *testing.T) (string, *atomic.Int32) {
	t.Helper()
	var answered atomic.Int32
	shop := server.NewMCPServer("shop", "1.0.0")
	shop.AddTool(mcp.NewTool("order"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := server.ElicitationResponse(req.Params.InputResponses, "order")
		if r == nil {
			return server.NewInputRequestBuilder(heldState).Elicit("order", mcp.ElicitationParams{
				Message: "How many crates, and a delivery note?",
				RequestedSchema: map[string]any{"type": "object", "required": []string{"crates"}, "properties": map[string]any{
					"crates": map[string]any{"type": "integer", "minimum": 1, "maximum": 9},
					"note":   map[string]any{"type": "string", "maxLength": 200}}}}).ToolResult(), nil
		}
		answered.Add(1)
		if req.Params.RequestState != heldState {
			return mcp.NewToolResultError("the request state did not come back"), nil
		}
		m, _ := r.Content.(map[string]any)
		if r.Action != mcp.ElicitationResponseActionAccept || m["note"] != heldNote {
			return mcp.NewToolResultError(fmt.Sprintf("unexpected answer %s %v", r.Action, m)), nil
		}
		return mcp.NewToolResultText(fmt.Sprintf("ordered %v crates, note taken", m["crates"])), nil
	})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(shop))
	t.Cleanup(srv.Close)
	return srv.URL, &answered
}

// TestDeployedHeldFormOutlivesTheWorker: through the deployed platform
// (migrate, serve and worker as processes), a stateless server's form is
// held by the run, not by a worker. The worker process is stopped while the
// run waits; the operator answers through the API with no worker up, and the
// server is not called; a worker starts again and the call reaches the
// server exactly once, with the answer and the server's state. Neither the
// state nor the answer is in the run's history or the platform's logs.
func TestDeployedHeldFormOutlivesTheWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes")
	}
	url, answered := heldFormServer(t)
	model := newScriptedModel(t, boxModelKey, []toolCall{{"shop_order", map[string]any{}}}, nil)
	d := deploy(t, map[string]string{"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL})
	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Quay"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Stores"})["id"].(string)
	agent := d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Buyer"})["id"].(string)
	ann := d.must(201, "POST", "/api/users", map[string]any{"name": "ann", "organisation_id": org})["token"].(string)

	row := httpRow("shop", url)
	row["config"] = map[string]any{"elicitation": "person"}
	d.must(201, "POST", "/api/admin/mcp/servers", row)
	makeUsable(t, d, publishedServer{slug: "shop"}, org)

	runID := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Order the crates."})["id"].(string)
	form := d.awaitInput(runID)
	if !strings.Contains(string(form.Schema), `"crates"`) {
		t.Fatalf("the form's schema: %s", form.Schema)
	}
	if n := d.count(t, `SELECT count(*) FROM input_holds WHERE run_id = '`+runID+`'`); n != 1 {
		t.Fatalf("%d held calls for the run, want 1", n)
	}

	from := len(d.logs["worker"].String())
	d.stop("worker")
	// An answer out of the schema is refused and the form stays open.
	if r := d.callAs(ann, "POST", "/api/inputs/"+form.ID, map[string]any{"action": "accept",
		"content": map[string]any{"crates": 40}}); r.Status != 422 {
		t.Errorf("an answer out of the schema: %d %s", r.Status, r.Body)
	}
	if r := d.callAs(ann, "POST", "/api/inputs/"+form.ID, map[string]any{"action": "accept",
		"content": map[string]any{"crates": 3, "note": heldNote}}); r.Status != 200 {
		t.Fatalf("the operator's answer: %d %s", r.Status, r.Body)
	}
	if n := answered.Load(); n != 0 {
		t.Fatalf("the server was called with the answer %d times while no worker was up", n)
	}
	d.start("worker")
	d.waitReady(from)

	transcript := d.waitRun(runID)
	tr := transcriptOf(t, transcript)
	if len(tr.ToolCalls) != 1 || tr.ToolCalls[0].Outcome != "ok" || !strings.Contains(tr.ToolCalls[0].Result, "ordered 3 crates, note taken") {
		t.Fatalf("the held call's result:\n%s", transcript)
	}
	if n := answered.Load(); n != 1 {
		t.Errorf("the server received the answer %d times, want once", n)
	}
	if n := d.count(t, `SELECT count(*) FROM input_holds WHERE run_id = '`+runID+`'`); n != 0 {
		t.Errorf("%d held calls left after the answer was delivered", n)
	}
	places := map[string]string{"the run's history": d.history("run-" + runID), "the logs": d.Logs()}
	for where, text := range places {
		for _, secret := range []string{heldState, heldNote} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds %q", where, secret)
			}
		}
	}
}
