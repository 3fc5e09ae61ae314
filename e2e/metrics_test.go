package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
)

// TestWorkerMetrics: the tool calls of a run happen in `guilds worker`, so
// their guilds_* metrics are on the worker's own /metrics (beside its
// /readyz), not on the API's.
func TestWorkerMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes")
	}
	as := oauthtest.New(t)
	as.EmailDomain = "acme.test"
	rs := as.Protect(t, "/mcp", server.NewStreamableHTTPServer(acmeServer(), server.WithStateful(true)), nil)
	model := newScriptedModel(t, boxModelKey,
		[]toolCall{{"note_write", map[string]any{"level": "agent", "key": "todo.md", "content": "buy milk"}}},
		[]toolCall{{"acme_echo", map[string]any{"text": "from the run"}}},
		nil)
	metrics := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))
	d := deploy(t, map[string]string{"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL,
		"GUILDS_WORKER_METRICS_ADDR": strings.TrimPrefix(metrics, "http://")})

	resp, err := http.Get(metrics + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(resp); resp.StatusCode != 200 || !strings.Contains(body, `"ready":true`) {
		t.Fatalf("worker /readyz: %d %s", resp.StatusCode, body)
	}

	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Ops"})["id"].(string)
	agent := d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Scribe"})["id"].(string)
	connectAcme(t, d, rs.URL+"/mcp", org)
	run := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Note the milk, then ask Acme."})
	d.waitRun(run["id"].(string))

	resp, err = http.Get(metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	worker := readAll(resp)
	if resp.StatusCode != 200 {
		t.Fatalf("worker /metrics: %d", resp.StatusCode)
	}
	for _, want := range [][]string{
		{"guilds_tool_call_duration_seconds_count{", `tool="note_write"`, `outcome="ok"`},
		{"guilds_tool_call_duration_seconds_count{", `tool="acme_echo"`, `outcome="ok"`},
		{"guilds_mcp_request_duration_seconds_count{", `server="acme"`, `method="tools/call"`},
		{"guilds_runs_total{", `status="completed"`},
	} {
		if !hasSample(worker, want[0], want[1:]...) {
			t.Errorf("worker /metrics has no %s", strings.Join(want, " "))
		}
	}
	resp, err = http.Get(d.API + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	if api := readAll(resp); hasSample(api, "guilds_tool_call_duration_seconds_count{", `tool="note_write"`) {
		t.Error("the API process counted the worker's tool call")
	}
}

// hasSample reports whether a Prometheus text exposition has a sample line
// that starts with the metric's name and holds every label given.
func hasSample(exposition, name string, labels ...string) bool {
	for line := range strings.Lines(exposition) {
		if !strings.HasPrefix(line, name) {
			continue
		}
		all := true
		for _, l := range labels {
			all = all && strings.Contains(line, l)
		}
		if all {
			return true
		}
	}
	return false
}
