package run_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/runs"
)

// fastPathScript mixes quick calls (echo, add, noop) with calls that stay
// activities (the MCP tool, a side-effecting tool) in one turn, then a
// quick call alone.
func fastPathScript() []turn {
	return []turn{
		{Text: "looking", Calls: []call{
			{"echo", `{"text":"hi"}`},
			{"add", `{"a":1,"b":2}`},
			{"notion_lookup", `{"query":"roadmap"}`},
			{"noop", `{}`},
			{"side_effect", `{}`},
			{"add", `{"a":"one","b":2}`}, // refused by the schema check, on either path
		}},
		{Calls: []call{{"echo", `{"text":"again"}`}}},
		{Text: "all done"},
	}
}

// storedRow is what a run stores of a message or a call, without times.
type storedRow struct {
	Seq                                      int
	Role, Content, ToolCallID, Calls         string
	CallID, Tool, Arguments, Result, Outcome string
	Metadata                                 string
}

func storedRows(t *testing.T, tr runs.Transcript) []storedRow {
	t.Helper()
	var out []storedRow
	for _, m := range tr.Messages {
		calls, _ := json.Marshal(m.ToolCalls)
		out = append(out, storedRow{Seq: m.Seq, Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, Calls: string(calls)})
	}
	for _, c := range tr.ToolCalls {
		out = append(out, storedRow{Seq: c.Seq, CallID: c.CallID, Tool: c.Tool, Arguments: c.Arguments,
			Result: c.Result, Outcome: c.Outcome, Metadata: string(c.Metadata)})
	}
	return out
}

// pathsOf counts, in a run's history, the tool activities scheduled on the
// task queue and the local tool activities recorded as markers.
func pathsOf(t *testing.T, e *env, id string) (activities, locals int) {
	t.Helper()
	for _, ev := range fetchHistory(t, e, id).Events {
		switch ev.GetEventType() {
		case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == "tool" {
				activities++
			}
		case enums.EVENT_TYPE_MARKER_RECORDED:
			if ev.GetMarkerRecordedEventAttributes().GetMarkerName() == "LocalActivity" {
				locals++
			}
		}
	}
	return activities, locals
}

// The same script on the activity path and on the fast path stores the same
// messages and calls (results, outcomes, metadata, order); only the way the
// quick calls ran differs: as local activities, while the MCP and
// side-effecting calls stay activities.
func TestFastPathStoresWhatTheActivityPathStores(t *testing.T) {
	t.Parallel()
	var rows [2][]storedRow
	for i, quick := range []bool{false, true} {
		// Each path in a subtest of its own: its own task queue and database.
		t.Run(map[bool]string{false: "activity", true: "fast"}[quick], func(t *testing.T) {
			rows[i] = runFastPathScript(t, quick)
		})
	}
	if len(rows[0]) == 0 || len(rows[0]) != len(rows[1]) {
		t.Fatalf("activity path stored %d rows, fast path %d", len(rows[0]), len(rows[1]))
	}
	for i := range rows[0] {
		if rows[0][i] != rows[1][i] {
			t.Errorf("row %d differs:\nactivity path %+v\nfast path     %+v", i, rows[0][i], rows[1][i])
		}
	}
}

// runFastPathScript runs fastPathScript on one path and returns what it stored.
func runFastPathScript(t *testing.T, quick bool) []storedRow {
	e := newEnv(t, envOptions{quick: quick}, fastPathScript()...)
	id := e.start("compare the paths", 20)
	res, err := e.wait(id, 2*time.Minute)
	if err != nil {
		t.Fatalf("quick=%v: %v", quick, err)
	}
	if res.Status != runs.StatusCompleted || res.Text != "all done" || res.Remaining != 13 {
		t.Fatalf("quick=%v: result %+v", quick, res)
	}
	rows := storedRows(t, transcript(t, e, id))
	acts, locals := pathsOf(t, e, id)
	want := map[bool][2]int{false: {7, 0}, true: {2, 5}}[quick]
	if acts != want[0] || locals != want[1] {
		t.Fatalf("quick=%v: %d tool activities and %d local ones, want %v", quick, acts, locals, want)
	}
	if n := e.count(`SELECT count(*) FROM test_executions WHERE tool = 'side_effect'`); n != 1 {
		t.Fatalf("quick=%v: side_effect ran %d times", quick, n)
	}
	if quick {
		recordHistory(t, e, id, "fast_path.json")
	}
	return rows
}

// A quick call whose worker was lost between storing the call and storing
// its result message (two statements) runs again as a local activity: the
// second run returns the stored call and stores the missing message, so the
// model's next turn sees the result and asks for nothing twice.
func TestToolLocalRestoresALostResultMessage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{quick: true}, turn{Calls: []call{{"echo", `{"text":"kept"}`}}}, turn{Text: "done"})
	id := e.start("lose a message", 5)
	if _, err := e.wait(id, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tr := transcript(t, e, id)
	if len(tr.ToolCalls) != 1 {
		t.Fatalf("calls = %+v", tr.ToolCalls)
	}
	tc := tr.ToolCalls[0]
	if _, err := e.db.Exec(ctx, `DELETE FROM messages WHERE run_id = $1 AND seq = $2`, id, tc.Seq); err != nil {
		t.Fatal(err)
	}
	a, closeMCP := activitiesWith(e.db, e.gate, e.model.URL, e.mcpURL, "", slog.New(slog.DiscardHandler), true)
	defer closeMCP()
	out, err := a.ToolLocal(ctx, runact.ToolInput{RunID: id, Seq: tc.Seq, CallID: tc.CallID, Name: "echo", Arguments: `{"text":"kept"}`})
	if err != nil {
		t.Fatal(err)
	}
	if out.Result != tc.Result || out.Outcome != tc.Outcome {
		t.Fatalf("second run = %+v, stored %+v", out, tc)
	}
	var content, callID string
	if err := e.db.QueryRow(ctx, `SELECT content, tool_call_id FROM messages WHERE run_id = $1 AND seq = $2 AND role = 'tool'`,
		id, tc.Seq).Scan(&content, &callID); err != nil {
		t.Fatalf("result message not restored: %v", err)
	}
	if content != tc.Result || callID != tc.CallID {
		t.Fatalf("restored message %q %q", content, callID)
	}
	// The activity path and the record of an interrupted call repair it the same way.
	for name, again := range map[string]func() error{
		"activity": func() error {
			_, err := a.Tool(ctx, runact.ToolInput{RunID: id, Seq: tc.Seq, CallID: tc.CallID, Name: "echo", Arguments: `{"text":"kept"}`})
			return err
		},
		"record": func() error {
			_, _, err := runs.SaveToolCall(ctx, e.db, runs.ToolCall{RunID: id, Seq: tc.Seq, CallID: tc.CallID, Tool: "echo",
				Result: "ERROR: interrupted", Outcome: runs.OutcomeInterrupted})
			return err
		},
	} {
		if _, err := e.db.Exec(ctx, `DELETE FROM messages WHERE run_id = $1 AND seq = $2`, id, tc.Seq); err != nil {
			t.Fatal(err)
		}
		if err := again(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := e.db.QueryRow(ctx, `SELECT content FROM messages WHERE run_id = $1 AND seq = $2 AND role = 'tool'`,
			id, tc.Seq).Scan(&content); err != nil || content != tc.Result {
			t.Fatalf("%s: result message not restored (%q, %v)", name, content, err)
		}
	}
}
