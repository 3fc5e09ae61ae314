package runs_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
)

func saveCall(t *testing.T, db *pgxpool.Pool, runID string, seq int, tool, outcome, result, meta string) {
	t.Helper()
	now := time.Now()
	if _, _, err := runs.SaveToolCall(context.Background(), db, runs.ToolCall{RunID: runID, Seq: seq, CallID: "c",
		Tool: tool, Arguments: "{}", Result: result, Outcome: outcome, StartedAt: now, FinishedAt: now,
		Metadata: json.RawMessage(meta)}); err != nil {
		t.Fatal(err)
	}
}

// A run's exploration counts the calls before its first successful edit and
// the bytes read from files it never edited, and the run payload carries it.
func TestExplorationIsRecordedOnTheRun(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	r := newRun(t, db)
	if got, _ := runs.Load(ctx, db, r.ID); got.Exploration != nil {
		t.Fatalf("a fresh run has exploration %+v", got.Exploration)
	}

	saveCall(t, db, r.ID, 3, "code_search", runs.OutcomeOK, "a.py\t2", `{"matches":2}`)
	saveCall(t, db, r.ID, 4, "file_read", runs.OutcomeOK, "xxxxxxxxxx", `{"path":"/home/agent/a.py","range":[1,2],"bytes":10}`)
	e, err := runs.RecordExploration(ctx, db, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if e.CallsBeforeFirstEdit != nil || e.ReadBytesUnedited != 10 {
		t.Fatalf("before any edit: %+v", e)
	}
	raw, _ := json.Marshal(e)
	if string(raw) != `{"calls_before_first_edit":null,"read_bytes_unedited":10}` {
		t.Fatalf("encoded as %s", raw)
	}

	// A failed edit is not the first edit; a successful write of a.py makes
	// the read of a.py an edited file's; b.py stays unedited.
	saveCall(t, db, r.ID, 6, "file_edit", runs.OutcomeError, "ERROR: old_string not found", `{}`)
	saveCall(t, db, r.ID, 7, "file_read", runs.OutcomeOK, "yyyyy", `{"path":"/home/agent/b.py","range":[1,1],"bytes":5}`)
	saveCall(t, db, r.ID, 8, "file_write", runs.OutcomeOK, "wrote a.py (3 lines)", `{"path":"/home/agent/a.py","lines_added":3}`)
	saveCall(t, db, r.ID, 9, "file_read", runs.OutcomeError, "ERROR: no such file", `{}`)
	if _, err := runs.RecordExploration(ctx, db, r.ID); err != nil {
		t.Fatal(err)
	}
	got, err := runs.Load(ctx, db, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Exploration == nil || got.Exploration.CallsBeforeFirstEdit == nil ||
		*got.Exploration.CallsBeforeFirstEdit != 4 || got.Exploration.ReadBytesUnedited != 5 {
		t.Fatalf("exploration %+v", got.Exploration)
	}
	payload, _ := json.Marshal(got)
	var decoded map[string]any
	_ = json.Unmarshal(payload, &decoded)
	if ex, ok := decoded["exploration"].(map[string]any); !ok || ex["calls_before_first_edit"] != float64(4) {
		t.Fatalf("run payload %s", payload)
	}
}

func TestCallSummariesFiltersByToolAndSeq(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	r := newRun(t, db)
	saveCall(t, db, r.ID, 2, "file_read", runs.OutcomeOK, "abc", `{"path":"/home/agent/a"}`)
	saveCall(t, db, r.ID, 3, "shell", runs.OutcomeOK, "hi", `{}`)
	saveCall(t, db, r.ID, 4, "file_read", runs.OutcomeOK, "abcd", `{}`)
	got, err := runs.CallSummaries(ctx, db, r.ID, 4, "file_read")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Seq != 2 || got[0].ResultBytes != 3 {
		t.Fatalf("%+v", got)
	}
	all, err := runs.CallSummaries(ctx, db, r.ID, 0)
	if err != nil || len(all) != 3 {
		t.Fatalf("%+v %v", all, err)
	}
}
