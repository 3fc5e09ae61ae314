package group_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	enums "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/guilds/guilds/workflows/group"
)

var record = flag.Bool("record", false, "record workflow histories into testdata/ for the replay tests")

// recordRoute writes a message's route history as JSON (the replayer's
// format) when the tests run with -record.
func (e *env) recordRoute(messageID, name string) {
	e.t.Helper()
	if !*record {
		return
	}
	it := e.c.GetWorkflowHistory(context.Background(), group.WorkflowID(messageID), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			e.t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	raw, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name), raw, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// Recorded histories (go test -run 'TestOperatorMessageToTwoAgentsAndAThird|TestHopBound|TestRouterFallback'
// ./workflows/group/ -record) must replay against the current workflow code:
// a change that breaks them would break routings in flight and needs
// workflow.GetVersion.
func TestReplayRecordedHistories(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no recorded histories in testdata/")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflowWithOptions(group.Route, workflow.RegisterOptions{Name: group.WorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(nil, f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}
