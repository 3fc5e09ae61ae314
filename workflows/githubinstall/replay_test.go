package githubinstall_test

import (
	"bytes"
	"context"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/temporalproto"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
	"google.golang.org/protobuf/proto"

	acts "github.com/guilds/guilds/activities/githubinstall"
	gi "github.com/guilds/guilds/workflows/githubinstall"
)

var record = flag.Bool("record", false, "record workflow histories into testdata/ for the replay test")

// Recorded histories (go test -run TestHistories ./workflows/githubinstall/ -record)
// must replay against the current workflow code: a change that breaks them
// would break installs in flight and needs workflow.GetVersion.
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
			r.RegisterWorkflowWithOptions(gi.Workflow, workflow.RegisterOptions{Name: gi.WorkflowName})
			if err := r.ReplayWorkflowHistoryFromJSONFile(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)), f); err != nil {
				t.Fatalf("replay %s: %v", f, err)
			}
		})
	}
}

// history waits for the login's workflow to end and fails when a secret
// is in its wire encoding; under -record it writes the history.
func (e *env) history(t *testing.T, id, name string, secrets ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var end gi.Step
	if err := e.c.GetWorkflow(ctx, gi.ID(id), "").Get(ctx, &end); err != nil {
		t.Fatal(err)
	}
	it := e.c.GetWorkflowHistory(ctx, gi.ID(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	h := &historypb.History{}
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			t.Fatal(err)
		}
		h.Events = append(h.Events, ev)
	}
	raw, err := proto.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if s != "" && bytes.Contains(raw, []byte(s)) {
			t.Errorf("the history holds a secret (%d bytes)", len(s))
		}
	}
	if !*record {
		return
	}
	js, err := temporalproto.CustomJSONMarshalOptions{Indent: "  "}.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name), js, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The endings of an install with the real activities and server: connected
// through the picker, refused, requested. No code, state or installation
// token is in their histories.
func TestHistories(t *testing.T) {
	t.Run("picker", func(t *testing.T) {
		e := newEnv(t)
		e.gh.AddUser("octo", e.gh.AddInstallation("acme-gh"), e.gh.AddInstallation("beta-gh"))
		id, state := e.begin(t)
		code := e.gh.Code("octo")
		if s := e.send(t, id, gi.UpdateCallback, acts.CallbackParams{State: state, Code: code}); s.Status != gi.StatusChoose {
			t.Fatalf("step %+v", s)
		}
		if s := e.send(t, id, gi.UpdateChoice, acts.CallbackParams{State: state, Account: "beta-gh"}); s.Status != gi.StatusConnected {
			t.Fatalf("choice %+v", s)
		}
		e.history(t, id, "picker-connected.json", code, state)
	})
	t.Run("refused", func(t *testing.T) {
		e := newEnv(t)
		e.gh.AddUser("octo", e.gh.AddInstallation("acme-gh"))
		victim := e.gh.AddInstallation("victim")
		id, state := e.begin(t)
		code := e.gh.Code("octo")
		if s := e.send(t, id, gi.UpdateCallback, acts.CallbackParams{State: state, Code: code, InstallationID: victim}); s.Status != gi.StatusRefused {
			t.Fatalf("step %+v", s)
		}
		e.history(t, id, "refused.json", code, state)
	})
	t.Run("requested", func(t *testing.T) {
		e := newEnv(t)
		id, state := e.begin(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if s, err := gi.Send(ctx, e.c, id, gi.UpdateCallback, gi.Callback{Requested: true}); err != nil || s.Status != gi.StatusRequested {
			t.Fatalf("step %+v %v", s, err)
		}
		e.history(t, id, "requested.json", state)
	})
}
