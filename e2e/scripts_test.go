package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox/dockertest"
)

// greetPy reads its arguments from stdin and greets.
const greetPy = "import json, sys\na = json.load(sys.stdin)\nprint('hello', a.get('who', 'nobody'))\n"

// TestScriptsRun is a run on the deployed platform in which a scripted
// model creates a script with parameters, runs it, creates and deletes a
// second one; the next run offers the first as a tool of its own, and the
// model calls it, once with arguments its schema refuses.
func TestScriptsRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes and a sandbox")
	}
	cli := dockertest.Client(t)
	image := dockertest.AgentImage(t, cli)
	params := map[string]any{"type": "object", "properties": map[string]any{"who": map[string]any{"type": "string"}},
		"required": []string{"who"}, "additionalProperties": false}
	model := newScriptedModel(t, boxModelKey,
		// First run.
		[]toolCall{{"script_create", map[string]any{"name": "greet", "description": "greet someone", "source": greetPy, "parameters": params}}},
		[]toolCall{{"script_run", map[string]any{"name": "greet", "arguments": map[string]any{"who": "Ada"}}}},
		[]toolCall{{"script_create", map[string]any{"name": "scratch", "description": "a throwaway", "source": "print('scratch')\n"}}},
		[]toolCall{{"script_run", map[string]any{"name": "scratch"}}},
		[]toolCall{{"script_delete", map[string]any{"name": "scratch"}}},
		[]toolCall{{"script_run", map[string]any{"name": "scratch"}}, {"script_list", map[string]any{}}},
		nil,
		// Second run: the script is a tool.
		[]toolCall{{"greet", map[string]any{"who": "Bob"}}, {"greet", map[string]any{"who": 5}}},
		nil)
	scope := fmt.Sprintf("e2e-scripts-%d", time.Now().UnixNano())
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
		"GUILDS_SANDBOX_DRIVER": "docker", "GUILDS_SANDBOX_IMAGE": image, "GUILDS_SANDBOX_SCOPE": scope,
	})
	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Ops"})["id"].(string)
	agent = d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Scripter"})["id"].(string)

	type call struct {
		Tool     string         `json:"tool"`
		Result   string         `json:"result"`
		Outcome  string         `json:"outcome"`
		Metadata map[string]any `json:"metadata"`
	}
	calls := func(runID string) []call {
		var tr struct {
			ToolCalls []call `json:"tool_calls"`
		}
		if err := json.Unmarshal([]byte(d.waitRun(runID)), &tr); err != nil {
			t.Fatal(err)
		}
		return tr.ToolCalls
	}
	check := func(c call, tool string, wants ...string) {
		t.Helper()
		if c.Tool != tool {
			t.Fatalf("call is %s, want %s: %s", c.Tool, tool, c.Result)
		}
		for _, w := range wants {
			if !strings.Contains(c.Result, w) {
				t.Errorf("%s lacks %q:\n%s", tool, w, c.Result)
			}
		}
	}

	first := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Make a greeting script."})["id"].(string)
	tc := calls(first)
	if len(tc) != 7 {
		t.Fatalf("%d tool calls: %+v", len(tc), tc)
	}
	check(tc[0], "script_create", "created script greet", "from your next run it is also the tool greet")
	check(tc[1], "script_run", "hello Ada", "time: ")
	if tc[1].Metadata["exit_code"] != float64(0) || tc[1].Metadata["script"] != "greet" {
		t.Errorf("script_run metadata %v", tc[1].Metadata)
	}
	check(tc[2], "script_create", "created script scratch")
	check(tc[3], "script_run", "scratch")
	check(tc[4], "script_delete", "deleted script scratch")
	check(tc[5], "script_run", "ERROR: 404 script scratch not found")
	check(tc[6], "script_list", `"name":"greet"`)
	if strings.Contains(tc[6].Result, "scratch") {
		t.Errorf("script_list still lists scratch: %s", tc[6].Result)
	}
	var list []map[string]any
	if r := d.Call("GET", "/api/agents/"+agent+"/scripts", nil); r.Status != 200 {
		t.Fatalf("GET scripts: %d %s", r.Status, r.Body)
	} else if err := json.Unmarshal(r.Body, &list); err != nil || len(list) != 1 || list[0]["name"] != "greet" {
		t.Fatalf("GET scripts: %s", r.Body)
	}

	second := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Greet Bob."})["id"].(string)
	tc = calls(second)
	if len(tc) != 2 {
		t.Fatalf("%d tool calls in the second run: %+v", len(tc), tc)
	}
	check(tc[0], "greet", "hello Bob")
	if tc[0].Metadata["kind"] != "script" || tc[0].Metadata["exit_code"] != float64(0) {
		t.Errorf("greet metadata %v", tc[0].Metadata)
	}
	check(tc[1], "greet", "ERROR: invalid arguments", "who")
	if !strings.Contains(model.Received(), `"name":"greet"`) {
		t.Errorf("the model was never offered greet")
	}
	if r := d.Call("DELETE", "/api/agents/"+agent+"/scripts/greet", nil); r.Status != 204 {
		t.Fatalf("DELETE: %d %s", r.Status, r.Body)
	}
}
