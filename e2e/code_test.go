package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox/dockertest"
)

// The small Python project the scripted model writes: total has a bug its
// tests catch, which the model then fixes.
const (
	calcPy      = "def add(a, b):\n    return a + b\n\n\ndef total(xs):\n    out = 0\n    for x in xs:\n        out = add(out, -x)\n    return out\n"
	testCalcPy  = "import unittest\n\nfrom calc import add, total\n\n\nclass CalcTest(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n    def test_total(self):\n        self.assertEqual(total([1, 2, 3]), 6)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n"
	testCommand = "python3 -m unittest -v > results.txt 2>&1; echo tests=$?"
)

// TestCodingRun is a real coding run on the deployed platform: the worker
// runs the agent's workspace on the sandbox image (GUILDS_SANDBOX_*, the
// engine at DOCKER_HOST), and a scripted model writes a small Python project,
// runs its tests with shell, reads the failure, fixes the code, runs the
// tests again and reads the results. The transcript holds every step, the
// run payload its exploration, and no credential reaches the transcript, the
// sandbox's environment, the model, the Temporal history or a log line.
func TestCodingRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes and a sandbox")
	}
	cli := dockertest.Client(t)
	image := dockertest.AgentImage(t, cli)

	model := newScriptedModel(t, boxModelKey,
		[]toolCall{{"shell", map[string]any{"command": "mkdir -p calc && ls -A"}}},
		[]toolCall{
			{"file_write", map[string]any{"path": "calc/calc.py", "content": calcPy}},
			{"file_write", map[string]any{"path": "calc/test_calc.py", "content": testCalcPy}},
		},
		[]toolCall{{"shell", map[string]any{"command": "cd calc && python3 -m unittest -v", "timeout_seconds": 60}}},
		[]toolCall{{"file_read", map[string]any{"path": "calc.py"}}},
		[]toolCall{{"file_edit", map[string]any{"path": "calc.py", "old_string": "add(out, -x)", "new_string": "add(out, x)"}}},
		[]toolCall{{"shell", map[string]any{"command": testCommand}}},
		[]toolCall{{"file_read", map[string]any{"path": "results.txt"}}, {"shell", map[string]any{"command": "env"}}},
		[]toolCall{{"file_read", map[string]any{"path": "results.txt"}}},
		nil)
	scope := fmt.Sprintf("e2e-code-%d", time.Now().UnixNano())
	var agent string
	// Registered before deploy, so it runs after the worker stopped: the
	// agent's home volume outlives its sandboxes by design.
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
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Dev"})["id"].(string)
	agent = d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Coder",
		"config": map[string]any{"coding": true}})["id"].(string)

	offered := d.Call("GET", "/api/agents/"+agent+"/offered-tools?trigger=direct", nil)
	for _, name := range []string{"shell", "shell_status", "file_read", "file_edit", "file_write", "code_search",
		"code_match", "code_map", "code_find", "code_outline", "code_callers"} {
		if !strings.Contains(string(offered.Body), `"`+name+`"`) {
			t.Fatalf("a coding agent is not offered %s: %d %s", name, offered.Status, offered.Body)
		}
	}

	runID := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Write calc with tests, make them pass."})["id"].(string)
	transcript := d.waitRun(runID)

	var tr struct {
		Run struct {
			Status      string `json:"status"`
			Exploration *struct {
				CallsBeforeFirstEdit *int `json:"calls_before_first_edit"`
				ReadBytesUnedited    int  `json:"read_bytes_unedited"`
			} `json:"exploration"`
		} `json:"run"`
		ToolCalls []struct {
			Seq      int            `json:"seq"`
			Tool     string         `json:"tool"`
			Result   string         `json:"result"`
			Outcome  string         `json:"outcome"`
			Metadata map[string]any `json:"metadata"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal([]byte(transcript), &tr); err != nil {
		t.Fatal(err)
	}
	if len(tr.ToolCalls) != 10 {
		t.Fatalf("%d tool calls:\n%s", len(tr.ToolCalls), transcript)
	}
	call := func(i int, tool string, wants ...string) map[string]any {
		t.Helper()
		c := tr.ToolCalls[i]
		if c.Tool != tool {
			t.Fatalf("call %d is %s, want %s", i, c.Tool, tool)
		}
		for _, w := range wants {
			if !strings.Contains(c.Result, w) {
				t.Errorf("call %d (%s) lacks %q:\n%s", i, tool, w, c.Result)
			}
		}
		return c.Metadata
	}
	call(1, "file_write", "wrote calc/calc.py (9 lines)")
	call(2, "file_write", "wrote calc/test_calc.py (15 lines)")
	if m := call(3, "shell", "FAIL: test_total", "AssertionError: -6 != 6", "exit_code: 1"); m["exit_code"] != float64(1) || m["cwd"] != "/home/agent/calc" {
		t.Errorf("failing tests: metadata %v", m)
	}
	if m := call(4, "file_read", "lines 1–9 of 9", "add(out, -x)"); m["content_hash"] == nil || m["path"] != "/home/agent/calc/calc.py" {
		t.Errorf("file_read metadata %v", m)
	}
	if m := call(5, "file_edit", "edited calc.py (+1 −1)"); m["lines_added"] != float64(1) {
		t.Errorf("file_edit metadata %v", m)
	}
	call(6, "shell", "tests=0")
	call(7, "file_read", "Ran 2 tests", "OK", "test_total (test_calc.CalcTest")
	env := tr.ToolCalls[8].Result
	call(8, "shell", "GUILD_RUN_ID="+runID, "GUILD_AGENT_ID="+agent, "PAGER=cat")
	firstResults := tr.ToolCalls[7].Seq
	if m := call(9, "file_read", fmt.Sprintf("unchanged since step %d; read that result.", firstResults)); m["repeat_of"] != float64(firstResults) {
		t.Errorf("repeated read metadata %v", m)
	}
	for _, name := range []string{"OPENROUTER", "DATABASE_URL", "GUILDS_", "TEMPORAL", "REDIS", "DOCKER_HOST"} {
		if strings.Contains(env, name) {
			t.Errorf("the sandbox environment names %s:\n%s", name, env)
		}
	}

	ex := tr.Run.Exploration
	if ex == nil || ex.CallsBeforeFirstEdit == nil || *ex.CallsBeforeFirstEdit != 1 || ex.ReadBytesUnedited != len(tr.ToolCalls[7].Result)-trailerLen(tr.ToolCalls[7].Result)+
		len(tr.ToolCalls[9].Result)-trailerLen(tr.ToolCalls[9].Result) {
		t.Errorf("exploration %+v (results.txt reads %d and %d bytes stamped)", ex, len(tr.ToolCalls[7].Result), len(tr.ToolCalls[9].Result))
	}

	secrets := append([]string{boxModelKey}, d.secrets...)
	places := map[string]string{
		"the transcript":          transcript,
		"what the model received": model.Received(),
		"the run's history":       withPayloads(d.history("run-" + runID)),
		"the logs":                d.Logs(),
	}
	for place, text := range places {
		for _, s := range secrets {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("%s holds a credential (%.8s…)", place, s)
			}
		}
	}
	if !strings.Contains(places["the run's history"], "Ran 2 tests") {
		t.Errorf("the history check reads no tool result: decode the payloads")
	}
}

// trailerLen is the length of the remaining_tool_calls trailer (and the
// line before it) the platform adds to a stored result.
func trailerLen(stamped string) int {
	i := strings.LastIndex(stamped, "\n\nremaining_tool_calls:")
	if i < 0 {
		i = strings.LastIndex(stamped, "\nremaining_tool_calls:")
	}
	if i < 0 {
		return 0
	}
	return len(stamped) - i
}

var payloadData = regexp.MustCompile(`"data":"([A-Za-z0-9+/=]+)"`)

// withPayloads appends the decoded data of every payload of a history (as
// protobuf JSON, where it is base64), so a search sees what the activities
// carried.
func withPayloads(history string) string {
	var b strings.Builder
	b.WriteString(history)
	for _, m := range payloadData.FindAllStringSubmatch(history, -1) {
		if raw, err := base64.StdEncoding.DecodeString(m[1]); err == nil {
			b.WriteByte('\n')
			b.Write(raw)
		}
	}
	return b.String()
}
