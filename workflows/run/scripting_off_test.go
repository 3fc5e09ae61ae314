package run_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/native/scripts"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/runs"
)

// An operator turning the agent's scripting off mid-run takes its scripts
// offered as tools away from the following turns, as it takes script_run
// and every other native tool the flag gates; a call asked for by a turn
// that still offered one is refused.
func TestScriptingTurnedOffMidRunDropsScriptTools(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{noWorker: true})
	e.startGrantsWorker()
	ctx := context.Background()
	agent, err := orgs.LoadAgent(ctx, e.db, e.agent)
	if err != nil {
		t.Fatal(err)
	}
	in := scripts.Input{Name: "rates", Description: "fetch rates", Source: "print(1)\n",
		Parameters: []byte(`{"type":"object","properties":{"pair":{"type":"string"}}}`)}
	if err := in.Check(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := scripts.Create(ctx, e.db, agent, in, nil); err != nil {
		t.Fatal(err)
	}
	e.model.script = []turn{{Text: "thinking", Calls: []call{{"note_write", `{"level":"agent","key":"plan.md","content":"fetch the rates"}`}}}}
	e.model.repeat = func(n int) turn {
		switch n {
		case 1:
			off := false
			if _, err := orgs.UpdateAgent(ctx, e.db, platformAdmin, e.agent,
				orgs.AgentInput{Config: &orgs.AgentConfigInput{Scripting: &off}}); err != nil {
				t.Errorf("turn scripting off: %v", err)
			}
			return turn{Calls: []call{{"rates", `{"pair":"BTC/EUR"}`}}}
		default:
			return turn{Text: "done"}
		}
	}
	id := e.start("fetch the rates", 10)
	res, err := e.wait(id, 2*time.Minute)
	if err != nil {
		t.Fatalf("run failed: %v", err)
	}
	if res.Status != runs.StatusCompleted || res.Text != "done" {
		t.Fatalf("result = %+v", res)
	}
	reqs := e.model.Requests()
	if len(reqs) != 3 {
		t.Fatalf("model requests = %d", len(reqs))
	}
	if first := offeredNames(reqs[0]); !first["rates"] || !first[scripts.ToolRun] {
		t.Fatalf("the first turn does not offer the script and script_run: %v", first)
	}
	if last := offeredNames(reqs[2]); last["rates"] || last[scripts.ToolRun] || !last["note_write"] {
		t.Errorf("the turn after scripting was turned off offers %v", last)
	}
	tr := transcript(t, e, id)
	if len(tr.ToolCalls) != 2 {
		t.Fatalf("tool calls = %d", len(tr.ToolCalls))
	}
	if tc := tr.ToolCalls[1]; tc.Tool != "rates" || tc.Outcome != runs.OutcomeRefused || !strings.Contains(tc.Result, `unknown tool "rates"`) {
		t.Errorf("the call = %s %s %q", tc.Tool, tc.Outcome, tc.Result)
	}
}
