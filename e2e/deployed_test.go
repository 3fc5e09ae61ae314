package e2e

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	enumspb "go.temporal.io/api/enums/v1"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
)

const boxModelKey = "sk-or-e2e-box-key-0123456789abcdef"

// acmeServer is the remote MCP server behind the fake authorization server:
// echo answers its text; whoami answers the Authorization header it received,
// which the platform must redact before anyone sees it.
func acmeServer() *server.MCPServer {
	s := server.NewMCPServer("acme", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Echo a text"), mcp.WithString("text", mcp.Required())),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("echo: " + req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("whoami", mcp.WithDescription("Who the server thinks is calling")),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("authorization: " + req.Header.Get("Authorization")), nil
		})
	return s
}

// TestDeployedPlatform drives a production-shaped install only through its
// HTTP API: the native tools are offered, an OAuth login is connected with a
// browser's cookie jar, its tools are listed and Test-called, an expired token
// is refreshed, and an agent's run calls a native tool and that login's tool.
// No credential reaches the model, the transcript, the Temporal history or a
// log line.
func TestDeployedPlatform(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes")
	}
	as := oauthtest.New(t)
	as.EmailDomain = "acme.test"
	rs := as.Protect(t, "/mcp", server.NewStreamableHTTPServer(acmeServer(), server.WithStateful(true)), nil)
	model := newScriptedModel(t, boxModelKey,
		[]toolCall{{"note_write", map[string]any{"level": "agent", "key": "todo.md", "content": "buy milk"}},
			{"note_write", map[string]any{"level": "agent", "key": "scratch.md", "content": "to be deleted"}}},
		[]toolCall{{"note_get", map[string]any{"path": "agent/todo.md"}}, {"note_delete", map[string]any{"path": "agent/scratch.md"}}},
		[]toolCall{{"acme_echo", map[string]any{"text": "from the run"}}, {"acme_whoami", map[string]any{}}},
		nil)
	d := deploy(t, map[string]string{"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL})

	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Ops"})["id"].(string)
	agent := d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Scribe"})["id"].(string)

	// A production install seeds the catalog and the native tools' bindings.
	if r := d.Call("GET", "/api/agents/"+agent+"/offered-tools?trigger=direct", nil); r.Status != 200 ||
		!strings.Contains(string(r.Body), `"note_write"`) || !strings.Contains(string(r.Body), `"record_search"`) {
		t.Fatalf("offered tools on a fresh install: %d %s", r.Status, r.Body)
	}

	connID := connectAcme(t, d, rs.URL+"/mcp", org)

	tools := d.Call("GET", "/api/mcp/connections/"+connID+"/tools", nil)
	if tools.Status != 200 || !strings.Contains(string(tools.Body), `"acme_echo"`) || !strings.Contains(string(tools.Body), `"acme_whoami"`) {
		t.Fatalf("listed tools: %d %s", tools.Status, tools.Body)
	}
	if r := d.must(200, "POST", "/api/mcp/connections/"+connID+"/call", map[string]any{"tool": "echo", "arguments": map[string]any{"text": "hi"}}); r["result"] != "echo: hi" {
		t.Fatalf("test call: %v", r)
	}
	who := d.must(200, "POST", "/api/mcp/connections/"+connID+"/call", map[string]any{"tool": "whoami", "arguments": map[string]any{}})
	if res, _ := who["result"].(string); !strings.HasPrefix(res, "authorization: Bearer ") || strings.Contains(res, "at-") {
		t.Fatalf("whoami through the Test call: %v", who)
	}

	// The server stops accepting the token: the next call refreshes it once.
	as.ExpireAccess()
	if r := d.must(200, "POST", "/api/mcp/connections/"+connID+"/call", map[string]any{"tool": "echo", "arguments": map[string]any{"text": "again"}}); r["result"] != "echo: again" || as.Count("refresh") != 1 {
		t.Fatalf("after expiry: %v, %d refreshes", r, as.Count("refresh"))
	}

	// An agent's run: a native tool, then the login's two tools.
	run := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Note the milk, then ask Acme."})
	runID := run["id"].(string)
	transcript := d.waitRun(runID)
	for _, want := range []string{`"note_write"`, `"note_get"`, `buy milk`, `"note_delete"`, `echo: from the run`, `authorization: Bearer `, `"status":"completed"`} {
		if !strings.Contains(transcript, want) {
			t.Errorf("transcript lacks %s:\n%s", want, transcript)
		}
	}
	// The audit trail: one event per call, naming the login that served the
	// login's tools (none for native ones), and the OAuth connect with who made it.
	var events []struct {
		Action, Tool, Kind, Outcome, Actor string
		ConnectionID                       string `json:"connection_id"`
		LoginScope                         string `json:"login_scope"`
		ArgsDigest                         string `json:"args_digest"`
	}
	if r := d.Call("GET", "/api/orgs/"+org+"/audit?run_id="+runID, nil); r.Status != 200 || json.Unmarshal(r.Body, &events) != nil {
		t.Fatalf("the run's audit trail: %d %s", r.Status, r.Body)
	}
	calls := map[string]int{}
	for _, e := range events {
		if e.Action != "tool_call" {
			continue
		}
		calls[e.Tool]++
		native := strings.HasPrefix(e.Tool, "note_")
		if e.Outcome != "ok" || e.ArgsDigest == "" || (native && e.ConnectionID != "") || (!native && (e.ConnectionID != connID || e.LoginScope != "organisation")) {
			t.Errorf("audit event of %s: %+v", e.Tool, e)
		}
	}
	if calls["note_write"] != 2 || calls["note_get"] != 1 || calls["note_delete"] != 1 || calls["acme_echo"] != 1 || calls["acme_whoami"] != 1 {
		t.Errorf("tool_call events by tool: %v", calls)
	}
	if r := d.Call("GET", "/api/orgs/"+org+"/audit?action=connect", nil); r.Status != 200 || !strings.Contains(string(r.Body), connID) {
		t.Errorf("no connect event for the OAuth login: %d %s", r.Status, r.Body)
	}
	// The agent's notes as the operator app lists them: the kept one, not the deleted one.
	if r := d.Call("GET", "/api/agents/"+agent+"/notes", nil); r.Status != 200 || !strings.Contains(string(r.Body), "todo.md") ||
		strings.Contains(string(r.Body), "scratch.md") {
		t.Errorf("the agent's notes after the run: %d %s", r.Status, r.Body)
	}

	secrets := append(as.Issued(), d.secrets...)
	secrets = append(secrets, boxModelKey)
	places := map[string]string{
		"the transcript":          transcript,
		"what the model received": model.Received(),
		"the run's history":       d.history("run-" + runID),
		"the connect history":     d.history("connect-" + connID),
		"the logs":                d.Logs(),
		"the Test call's answer":  string(who["result"].(string)),
	}
	for place, text := range places {
		for _, s := range secrets {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("%s holds a credential (%.8s…)", place, s)
			}
		}
	}
}

// connectAcme adds the OAuth MCP server at serverURL to the catalog as
// "acme" (the instance admin) and connects an organisation login to it (an
// operator, whose browser follows the authorization server's redirect back
// to the callback with the cookie Connect set). It returns the login's id.
func connectAcme(t *testing.T, d *deployment, serverURL, org string) string {
	t.Helper()
	return connectAcmeWith(t, d, serverURL, org, nil)
}

// connectAcmeWith is connectAcme with more of the catalog entry's config.
func connectAcmeWith(t *testing.T, d *deployment, serverURL, org string, config map[string]any) string {
	t.Helper()
	cfg := map[string]any{"provider": "oauth2", "dynamic_registration": true}
	for k, v := range config {
		cfg[k] = v
	}
	d.must(201, "POST", "/api/admin/mcp/servers", map[string]any{"slug": "acme", "name": "Acme", "transport": "http",
		"auth": "oauth", "url": serverURL, "config": cfg})
	conn := d.must(200, "POST", "/api/mcp/connect", map[string]any{"slug": "acme", "owner_scope": "organisation", "owner_id": org})
	connID := conn["connection"].(map[string]any)["id"].(string)
	authURL, _ := conn["authorization_url"].(string)
	if authURL == "" {
		t.Fatalf("connect: no authorization URL in %v", conn)
	}
	resp, err := d.Browser.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(resp); resp.StatusCode != 200 || !strings.Contains(body, "connected") {
		t.Fatalf("callback: %d %s\n%s", resp.StatusCode, body, d.Logs())
	}
	return connID
}

// waitRun polls the run until it ends and returns its transcript as JSON.
func (d *deployment) waitRun(id string) string {
	d.t.Helper()
	return d.waitRunFor(id, 3*time.Minute)
}

// waitRunFor is waitRun with its own failure bound.
func (d *deployment) waitRunFor(id string, bound time.Duration) string {
	d.t.Helper()
	deadline := time.Now().Add(bound)
	for time.Now().Before(deadline) {
		r := d.Call("GET", "/api/runs/"+id, nil)
		m := r.Map()
		run, _ := m["run"].(map[string]any)
		switch run["status"] {
		case "completed":
			return string(r.Body)
		case "failed", "cancelled":
			d.t.Fatalf("run %s: %s\n%s", run["status"], r.Body, d.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	d.t.Fatalf("run %s did not end\n%s", id, d.Logs())
	return ""
}

// runTranscript is the part of GET /api/runs/:id that tests read: the
// run's tool calls in order.
type runTranscript struct {
	ToolCalls []transcriptCall `json:"tool_calls"`
}

type transcriptCall struct {
	Tool      string         `json:"tool"`
	Arguments string         `json:"arguments"`
	Result    string         `json:"result"`
	Outcome   string         `json:"outcome"`
	Metadata  map[string]any `json:"metadata"`
}

// transcriptOf reads a run's tool calls from the JSON waitRun returns.
func transcriptOf(t *testing.T, raw string) runTranscript {
	t.Helper()
	var tr runTranscript
	if err := json.Unmarshal([]byte(raw), &tr); err != nil {
		t.Fatalf("the run's transcript: %v\n%s", err, raw)
	}
	return tr
}

// history returns a workflow's whole history as protobuf JSON.
func (d *deployment) history(workflowID string) string {
	d.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	it := d.Temporal.GetWorkflowHistory(ctx, workflowID, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var b strings.Builder
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			d.t.Fatalf("history of %s: %v", workflowID, err)
		}
		raw, _ := protojson.Marshal(ev)
		b.Write(raw)
		b.WriteByte('\n')
	}
	if b.Len() == 0 {
		d.t.Fatalf("no history for %s", workflowID)
	}
	return b.String()
}
