package run_test

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// testAppPage is the MCP Apps page the test MCP server returns for the query
// "chart"; it carries the login's credential, as a careless server might.
const testAppPage = `<!doctype html><p id="chart-page">chart drawn with ` + mcpSecret + `</p><script>parent.postMessage("x","*")</script>`

// An MCP Apps page a tool returns is kept with the run, redacted, for the
// operator; the model, the transcript and the workflow history hold only
// the text fallback and one line naming it.
func TestRunKeepsAToolAppForTheOperator(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{},
		turn{Calls: []call{{"notion_lookup", `{"query":"chart"}`}}},
		turn{Text: "charted"},
	)
	id := e.start("chart it", 5)
	if _, err := e.wait(id, time.Minute); err != nil {
		t.Fatal(err)
	}
	reqs := e.model.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests", len(reqs))
	}
	var tool string
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" {
			tool = m.Content
		}
	}
	if !strings.HasPrefix(tool, "3 points\n[app ui://notion/chart: text/html;profile=mcp-app, ") ||
		!strings.Contains(tool, "kept as run app 3.1, shown to the operator in the run's transcript]") {
		t.Fatalf("tool message = %q", tool)
	}
	const probe = `id="chart-page"`
	if n := e.count(`SELECT count(*) FROM messages WHERE run_id = $1 AND strpos(content, $2) > 0`, id, probe) +
		e.count(`SELECT count(*) FROM tool_calls WHERE run_id = $1 AND strpos(result, $2) > 0`, id, probe); n != 0 {
		t.Fatalf("the transcript holds the page (%d rows)", n)
	}
	if n := e.count(`SELECT count(*) FROM run_apps WHERE run_id = $1 AND seq = 3 AND idx = 1 AND uri = 'ui://notion/chart'
		AND strpos(html, $2) > 0 AND strpos(html, $3) = 0`, id, probe, mcpSecret); n != 1 {
		t.Fatalf("run_apps rows holding the redacted page = %d", n)
	}
	if h := historyBytes(t, e, id); bytes.Contains(h, []byte(probe)) {
		t.Fatal("the workflow history holds the page")
	}
}
