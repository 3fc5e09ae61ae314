package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox/dockertest"
)

// fakeTavily speaks Tavily's search wire format: POST /search with the
// Bearer key and {"query","search_depth","max_results"}.
func fakeTavily(t *testing.T, key string, calls *atomic.Int32) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Query       string `json:"query"`
			SearchDepth string `json:"search_depth"`
			MaxResults  int    `json:"max_results"`
		}
		if r.URL.Path != "/search" || r.Header.Get("Authorization") != "Bearer "+key ||
			json.NewDecoder(r.Body).Decode(&body) != nil || body.SearchDepth != "advanced" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"detail":{"error":"Unauthorized: missing or invalid API key."}}`))
			return
		}
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"query": body.Query, "response_time": 0.4, "results": []any{
			map[string]any{"title": "Rotating API keys safely", "url": "https://example.com/rotate", "content": "Create the new key, deploy it, then revoke the old one.", "score": 0.9},
		}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

// dbText is every tool-call row and message of the deployment, as text.
func (d *deployment) dbText(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, d.vars["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close(ctx) }()
	var b strings.Builder
	for _, q := range []string{`SELECT t::text FROM tool_calls t`, `SELECT m::text FROM messages m`,
		`SELECT r::text FROM secret_requests r`, `SELECT a::text FROM agent_secret_audit a`} {
		rows, err := c.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			b.WriteString(s + "\n")
		}
		rows.Close()
	}
	return b.String()
}

func (d *deployment) count(t *testing.T, sql string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, d.vars["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close(ctx) }()
	var n int
	if err := c.QueryRow(ctx, sql).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// noLeak fails when any value appears in any of the places.
func noLeak(t *testing.T, values []string, places map[string]string) {
	t.Helper()
	for place, text := range places {
		for _, v := range values {
			if v != "" && strings.Contains(text, v) {
				t.Errorf("%s holds a secret value (%.6s…)", place, v)
			}
		}
	}
}

// kill ends a subcommand with SIGKILL, as a crash or an OOM kill would.
func (d *deployment) kill(name string) {
	p := d.procs[name]
	if p == nil {
		return
	}
	delete(d.procs, name)
	_ = p.cmd.Process.Kill()
	if err := <-p.exited; err == nil {
		d.t.Errorf("guilds %s exited cleanly after SIGKILL", name)
	}
}

func problemField(r reply) string {
	var body struct {
		Error struct {
			Problems []struct{ Field string } `json:"problems"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.Body, &body)
	if len(body.Error.Problems) == 0 {
		return ""
	}
	return body.Error.Problems[0].Field
}

// TestDeployedAgentSecrets: an operator sets an organisation secret and
// grants it to a guild; a coding run on the sandbox image stores a secret of
// its own with secret_store, prints both from a shell command (they come
// back redacted) and searches the web through a local Tavily. Neither value
// nor the Tavily key appears in a tool-call row, a message, a log line, the
// Temporal history, what the model received or an API response. Bad inputs
// are refused naming the field, and nothing is stored.
func TestDeployedAgentSecrets(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes and a sandbox")
	}
	cli := dockertest.Client(t)
	image := dockertest.AgentImage(t, cli)
	const (
		opValue     = "op-deploy-token-5f2c81e9a7"
		mintedValue = "sk-minted-by-agent-93be1c44d0"
		tavilyKey   = "tvly-e2e-key-7c1d9a05b3e2"
	)
	var searches atomic.Int32
	tavily := fakeTavily(t, tavilyKey, &searches)
	model := newScriptedModel(t, boxModelKey,
		[]toolCall{{"secret_store", map[string]any{"name": "MINTED_KEY", "value": mintedValue}}},
		[]toolCall{{"shell", map[string]any{"command": `echo "minted=$MINTED_KEY deploy=$DEPLOY_TOKEN"; printf %s "$MINTED_KEY" | base64; ls -A /run/guilds/requests | wc -l; echo "box_keys_in_env=$(env | grep -ciE 'tavily|openrouter')"`}}},
		[]toolCall{{"tavily_search", map[string]any{"query": "how do I rotate an API key safely?"}}},
		nil)
	scope := fmt.Sprintf("e2e-secrets-%d", time.Now().UnixNano())
	var agent string
	t.Cleanup(func() {
		if agent != "" {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = cli.VolumeRemove(ctx, workspaces.HomeVolume(agent), true)
		}
	})
	d := deploy(t, map[string]string{
		"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL,
		"TAVILY_API_KEY": tavilyKey, "GUILDS_TAVILY_BASE_URL": tavily.URL,
		"GUILDS_SANDBOX_DRIVER": "docker", "GUILDS_SANDBOX_IMAGE": image, "GUILDS_SANDBOX_SCOPE": scope,
	})
	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Dev"})["id"].(string)
	agent = d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Coder",
		"config": map[string]any{"coding": true}})["id"].(string)
	other := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Other"})["id"].(string)
	otherGuild := d.must(201, "POST", "/api/orgs/"+other+"/guilds", map[string]any{"name": "X"})["id"].(string)
	outsider := d.must(201, "POST", "/api/guilds/"+otherGuild+"/agents", map[string]any{"name": "Outsider"})["id"].(string)
	var responses []string
	call := func(method, path string, body any) reply {
		r := d.Call(method, path, body)
		responses = append(responses, string(r.Body))
		return r
	}

	// Bad inputs: each refused naming its field, nothing stored.
	for _, c := range []struct {
		path  string
		body  any
		field string
	}{
		{"/api/orgs/" + org + "/secrets/bad-name", map[string]any{"value": opValue}, "name"},
		{"/api/orgs/" + org + "/secrets/DEPLOY_TOKEN", map[string]any{"value": ""}, "value"},
		{"/api/orgs/" + org + "/secrets/DEPLOY_TOKEN", map[string]any{}, "value"},
		{"/api/orgs/" + org + "/secrets/DEPLOY_TOKEN", map[string]any{"value": strings.Repeat("v", 4097)}, "value"},
		{"/api/orgs/" + org + "/secrets/DEPLOY_TOKEN", map[string]any{"value": "short"}, "value"},
	} {
		if r := call("PUT", c.path, c.body); r.Status != 422 || problemField(r) != c.field {
			t.Errorf("PUT %s: %d %s, want 422 on %s", c.path, r.Status, r.Body, c.field)
		}
	}
	if n := d.count(t, `SELECT count(*) FROM agent_secrets`); n != 0 {
		t.Fatalf("%d secrets stored by refused requests", n)
	}

	// The operator's secret, granted to the guild; a grant outside its owner is refused.
	if r := call("PUT", "/api/orgs/"+org+"/secrets/DEPLOY_TOKEN", map[string]any{"value": opValue}); r.Status != 201 {
		t.Fatalf("set: %d %s", r.Status, r.Body)
	}
	if r := call("PUT", "/api/orgs/"+org+"/secrets/DEPLOY_TOKEN/grants", map[string]any{"scope": "agent", "scope_id": outsider, "enabled": true}); r.Status != 422 || problemField(r) != "scope_id" {
		t.Errorf("grant outside the owner: %d %s", r.Status, r.Body)
	}
	if n := d.count(t, `SELECT count(*) FROM agent_secret_grants`); n != 0 {
		t.Fatalf("a refused grant stored %d rows", n)
	}
	g := call("PUT", "/api/orgs/"+org+"/secrets/DEPLOY_TOKEN/grants", map[string]any{"scope": "guild", "scope_id": guild, "enabled": true})
	if g.Status != 200 || !strings.Contains(string(g.Body), `"agent_id":"`+agent+`"`) {
		t.Fatalf("grant: %d %s", g.Status, g.Body)
	}

	offered := call("GET", "/api/agents/"+agent+"/offered-tools?trigger=direct", nil)
	for _, name := range []string{"secret_store", "secret_request", "tavily_search", "shell"} {
		if !strings.Contains(string(offered.Body), `"`+name+`"`) {
			t.Fatalf("not offered %s: %s", name, offered.Body)
		}
	}

	runID := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Keep the key, use it, then search."})["id"].(string)
	transcript := d.waitRun(runID)
	responses = append(responses, transcript)
	tr := transcriptOf(t, transcript)
	if len(tr.ToolCalls) != 3 {
		t.Fatalf("%d tool calls:\n%s", len(tr.ToolCalls), transcript)
	}
	store, shell, search := tr.ToolCalls[0], tr.ToolCalls[1], tr.ToolCalls[2]
	t.Logf("shell result:\n%s\nsearch result:\n%s\nstore arguments: %s", shell.Result, search.Result, store.Arguments)
	if !strings.Contains(store.Result, "stored secret MINTED_KEY, granted to you") || !strings.Contains(store.Arguments, `"value":"[REDACTED]"`) ||
		!strings.Contains(store.Arguments, `"name":"MINTED_KEY"`) {
		t.Errorf("secret_store call: %+v", store)
	}
	// Both values reached the command (non-empty) and came back redacted, base64 too;
	// the request file that carried them is gone; no box key is in the sandbox.
	if !strings.Contains(shell.Result, "minted=[REDACTED] deploy=[REDACTED]") || !strings.Contains(shell.Result, "\n0\n") ||
		!strings.Contains(shell.Result, "box_keys_in_env=0") {
		t.Errorf("shell result:\n%s", shell.Result)
	}
	if !strings.Contains(search.Result, "1. Rotating API keys safely\n   https://example.com/rotate\n   Create the new key") || searches.Load() != 1 {
		t.Errorf("search result (%d searches):\n%s", searches.Load(), search.Result)
	}
	if n := d.count(t, `SELECT count(*) FROM secret_call_arguments`); n != 0 {
		t.Errorf("%d sealed call arguments left after the run", n)
	}

	list := call("GET", "/api/agents/"+agent+"/secrets", nil)
	if !strings.Contains(string(list.Body), `"name":"MINTED_KEY"`) || !strings.Contains(string(list.Body), `"set_by":"agent:`+agent) {
		t.Errorf("the agent's secrets: %s", list.Body)
	}
	call("GET", "/api/orgs/"+org+"/secrets", nil)
	audit := call("GET", "/api/orgs/"+org+"/secret-audit", nil)
	if !strings.Contains(string(audit.Body), `"action":"grant"`) || !strings.Contains(string(audit.Body), `"name":"MINTED_KEY"`) {
		t.Errorf("audit: %s", audit.Body)
	}

	values := append([]string{opValue, mintedValue, tavilyKey, boxModelKey}, d.secrets...)
	history := withPayloads(d.history("run-" + runID))
	if !strings.Contains(history, "MINTED_KEY") {
		t.Fatal("the history check reads no payload: decode them")
	}
	noLeak(t, values, map[string]string{
		"the database's tool calls and messages": d.dbText(t),
		"what the model received":                model.Received(),
		"the run's history":                      history,
		"the logs":                               d.Logs(),
		"the API responses":                      strings.Join(responses, "\n"),
	})
}

// TestDeployedSecretRequest: in a direct run the agent asks for a secret;
// the request is in the run's list and the organisation's inbox; the
// operator answers while the worker is dead (SIGKILL in the middle of the
// call), a new worker takes the call over and the run goes on with the
// secret granted; a second request is declined and
// the model is told. The value is nowhere but sealed in its row.
func TestDeployedSecretRequest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes")
	}
	const value = "vendor-api-token-1f9e3b7a55"
	model := newScriptedModel(t, boxModelKey,
		[]toolCall{{"secret_request", map[string]any{"name": "VENDOR_TOKEN", "reason": "to call the vendor's API for the report"}}},
		[]toolCall{{"secret_request", map[string]any{"name": "BANK_PASSWORD", "reason": "to download statements"}}},
		nil)
	d := deploy(t, map[string]string{"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL})
	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Ops"})["id"].(string)
	agent := d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Clerk"})["id"].(string)
	runID := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Prepare the vendor report."})["id"].(string)

	pending := func(name string) string {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for time.Now().Before(deadline) {
			var list []struct{ ID, Name, Status string }
			_ = json.Unmarshal(d.Call("GET", "/api/runs/"+runID+"/secret-requests", nil).Body, &list)
			for _, r := range list {
				if r.Name == name && r.Status == "pending" {
					return r.ID
				}
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Fatalf("no pending request for %s\n%s", name, d.Logs())
		return ""
	}
	first := pending("VENDOR_TOKEN")
	inbox := d.Call("GET", "/api/orgs/"+org+"/secret-requests?status=pending", nil)
	if !strings.Contains(string(inbox.Body), first) || !strings.Contains(string(inbox.Body), "to call the vendor") {
		t.Fatalf("inbox: %s", inbox.Body)
	}

	d.kill("worker")
	if r := d.Call("POST", "/api/secret-requests/"+first, map[string]any{}); r.Status != 422 || problemField(r) != "value" {
		t.Errorf("empty answer: %d %s", r.Status, r.Body)
	}
	if r := d.Call("POST", "/api/secret-requests/"+first, map[string]any{"value": "short"}); r.Status != 422 || problemField(r) != "value" {
		t.Errorf("short answer: %d %s", r.Status, r.Body)
	}
	answer := d.Call("POST", "/api/secret-requests/"+first, map[string]any{"value": value})
	if answer.Status != 200 || !strings.Contains(string(answer.Body), `"status":"provided"`) {
		t.Fatalf("answer: %d %s", answer.Status, answer.Body)
	}
	if r := d.Call("POST", "/api/secret-requests/"+first, map[string]any{"decline": true}); r.Status != 409 {
		t.Errorf("second answer: %d %s", r.Status, r.Body)
	}
	from := len(d.logs["worker"].String())
	d.start("worker")
	d.waitReady(from)

	second := pending("BANK_PASSWORD")
	if r := d.Call("POST", "/api/secret-requests/"+second, map[string]any{"decline": true}); r.Status != 200 {
		t.Fatalf("decline: %d %s", r.Status, r.Body)
	}
	transcript := d.waitRun(runID)
	tr := transcriptOf(t, transcript)
	if len(tr.ToolCalls) != 2 || !strings.HasPrefix(tr.ToolCalls[0].Result, "the operator provided VENDOR_TOKEN") ||
		!strings.HasPrefix(tr.ToolCalls[1].Result, "the operator declined to provide BANK_PASSWORD") {
		t.Fatalf("transcript:\n%s", transcript)
	}
	if !strings.Contains(model.Received(), "the operator declined to provide BANK_PASSWORD") {
		t.Error("the model was not told of the decline")
	}
	secrets := d.Call("GET", "/api/agents/"+agent+"/secrets", nil)
	if !strings.Contains(string(secrets.Body), `"name":"VENDOR_TOKEN"`) || !strings.Contains(string(secrets.Body), `"agent_id":"`+agent+`"`) {
		t.Errorf("the provided secret: %s", secrets.Body)
	}
	noLeak(t, append([]string{value, boxModelKey}, d.secrets...), map[string]string{
		"the database's tool calls and messages": d.dbText(t),
		"what the model received":                model.Received(),
		"the run's history":                      withPayloads(d.history("run-" + runID)),
		"the logs":                               d.Logs(),
		"the API responses":                      string(answer.Body) + string(secrets.Body) + transcript,
	})
}
