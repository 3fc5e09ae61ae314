package run_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"slices"
	"testing"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/workflows/run"
)

// A run whose snapshot marks its tools quick but whose calls were scheduled
// as activities (a worker without the fast path ran its workflow tasks
// during a rolling deploy) replays: without the version marker the workflow
// keeps the activity path.
func TestReplayQuickSnapshotWithoutFastPathMarker(t *testing.T) {
	raw, err := os.ReadFile("testdata/end_to_end.json")
	if err != nil {
		t.Fatal(err)
	}
	h := &historypb.History{}
	if err := (temporalproto.CustomJSONUnmarshalOptions{}).Unmarshal(raw, h); err != nil {
		t.Fatal(err)
	}
	snapshots := map[int64]bool{}
	marked := 0
	for _, ev := range h.Events {
		switch ev.GetEventType() {
		case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == "snapshot" {
				snapshots[ev.GetEventId()] = true
			}
		case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
			a := ev.GetActivityTaskCompletedEventAttributes()
			if !snapshots[a.GetScheduledEventId()] {
				continue
			}
			p := a.GetResult().GetPayloads()[0]
			var out map[string]any
			if err := json.Unmarshal(p.GetData(), &out); err != nil {
				t.Fatal(err)
			}
			for _, tool := range out["tools"].([]any) {
				tool := tool.(map[string]any)
				if tool["name"] == "echo" || tool["name"] == "add" {
					tool["quick"] = true
					marked++
				}
			}
			if p.Data, err = json.Marshal(out); err != nil {
				t.Fatal(err)
			}
		}
	}
	if marked != 2 {
		t.Fatalf("marked %d tools of the recorded snapshot quick, want 2", marked)
	}
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(run.Workflow, workflow.RegisterOptions{Name: run.WorkflowName})
	if err := r.ReplayWorkflowHistory(nil, h); err != nil {
		t.Fatalf("replay: %v", err)
	}
}

// The native tools on the fast path: quick and idempotent, of the default
// class. A tool whose repeat would be seen (record_add adds a second record,
// report_issue files a second issue, note_delete and the schedule changes)
// stays on the activity path, where a lost call is not repeated.
func TestQuickNativeTools(t *testing.T) {
	reg := native.Registry(nil, slog.New(slog.DiscardHandler))
	var quick []string
	for _, tool := range reg.All() {
		if !tool.Quick {
			continue
		}
		quick = append(quick, tool.Name)
		if !tool.Idempotent || tool.Class != "default" {
			t.Errorf("%s is quick but idempotent=%v class=%s", tool.Name, tool.Idempotent, tool.Class)
		}
	}
	slices.Sort(quick)
	want := []string{"memory_write", "note_find", "note_get", "note_write", "record_list", "record_remove",
		"record_search", "record_update", "schedule_list"}
	if !slices.Equal(quick, want) {
		t.Fatalf("quick tools = %v, want %v", quick, want)
	}
}
