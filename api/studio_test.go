package api_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
)

// TestStudioSaysWhatItCannotShow: Studio picks the failing call, not the
// report that followed it; says why a platform tool cannot be tested and
// what is missing for an issue filed outside a run; refuses a call number
// that is not one (issue 34 item 8).
func TestStudioSaysWhatItCannotShow(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	org, guild, agent := e.Hierarchy()
	op := e.Operator(org)
	ctx := context.Background()
	var runID, inRun, outside string
	if err := e.DB.QueryRow(ctx, `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, status, budget, remaining)
		VALUES ($1, $2, $3, 'direct', 'completed', 5, 3) RETURNING id`, agent, guild, org).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DB.Exec(ctx, `INSERT INTO run_snapshots (run_id, tools) VALUES ($1,
		'[{"name":"note_write","kind":"native","description":"Write a note","class":"default","schema":{"type":"object"}}]')`, runID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DB.Exec(ctx, `INSERT INTO tool_calls (run_id, seq, call_id, tool_name, arguments, result, outcome, started_at, finished_at) VALUES
		($1, 2, 'a', 'note_write', '{"key":"plan.md"}', 'ok', 'ok', now(), now()),
		($1, 4, 'b', 'note_write', '{"key":"x"}', 'ERROR: the key is taken', 'error', now(), now()),
		($1, 6, 'c', 'report_issue', '{}', 'filed', 'ok', now(), now())`, runID); err != nil {
		t.Fatal(err)
	}
	if err := e.DB.QueryRow(ctx, `INSERT INTO tooling_issues (guild_id, agent_id, run_id, kind, summary) VALUES ($1, $2, $3, 'tool_failure', 'notes fail')
		RETURNING id`, guild, agent, runID).Scan(&inRun); err != nil {
		t.Fatal(err)
	}
	if err := e.DB.QueryRow(ctx, `INSERT INTO tooling_issues (guild_id, kind, summary) VALUES ($1, 'other', 'filed by hand') RETURNING id`, guild).Scan(&outside); err != nil {
		t.Fatal(err)
	}
	var v struct {
		Call     struct{ Seq int }
		Calls    []struct{ Seq int }
		Tool     struct{ Kind string }
		Walk     *struct{ Steps []struct{ Scope string } }
		Testable bool
		WhyNot   string `json:"why_not"`
		Missing  string
	}
	r := e.Do(op, "GET", "/api/issues/"+inRun+"/studio", nil)
	if r.Status != 200 {
		t.Fatalf("studio: %d %s", r.Status, r.Body)
	}
	r.JSON(&v)
	if v.Call.Seq != 4 || len(v.Calls) != 3 || v.Tool.Kind != "native" || v.Testable || !strings.Contains(v.WhyNot, "platform tool") ||
		v.Walk == nil || len(v.Walk.Steps) != 4 {
		t.Fatalf("studio of a failed native call: %s", r.Body)
	}
	if r := e.Do(op, "GET", "/api/issues/"+inRun+"/studio?seq=2", nil); r.Status != 200 || !strings.Contains(string(r.Body), `"arguments":"{\"key\":\"plan.md\"}"`) {
		t.Fatalf("studio of call 2: %d %s", r.Status, r.Body)
	}
	for q, want := range map[string]int{"?seq=0": 400, "?seq=x": 400, "?seq=99": 404} {
		if r := e.Do(op, "GET", "/api/issues/"+inRun+"/studio"+q, nil); r.Status != want {
			t.Errorf("studio%s: %d %s, want %d", q, r.Status, r.Body, want)
		}
	}
	v.Missing = ""
	r = e.Do(op, "GET", "/api/issues/"+outside+"/studio", nil)
	r.JSON(&v)
	if r.Status != 200 || v.Missing != "the issue was filed outside a run" {
		t.Fatalf("studio of an issue outside a run: %d %s", r.Status, r.Body)
	}
}
