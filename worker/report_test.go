package worker

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	sdkworker "go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/guilds/guilds/internal/errorreport"
	"github.com/guilds/guilds/internal/errorreport/errorreporttest"
	"github.com/guilds/guilds/internal/testtemporal"
)

func TestMain(m *testing.M) { os.Exit(testtemporal.Main(m)) }

const leakedToken = "upstream-token-0123456789abcdef"

func failing(_ context.Context, kind string) error {
	if kind == "typed" {
		return temporal.NewNonRetryableApplicationError("the login was refused", "refused", nil)
	}
	return errors.New("dial upstream with Authorization: Bearer " + leakedToken + ": connection reset")
}

func failingWorkflow(ctx workflow.Context, kind string) error {
	ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: 10 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
	return workflow.ExecuteActivity(ctx, "failing", kind).Get(ctx, nil)
}

// An activity's untyped error reaches error reporting with the run's id and
// without the credential it quoted; a typed refusal (an expected outcome) and
// the workflow's replays send nothing more.
func TestWorkerReportsUnexpectedFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("uses the Temporal dev server")
	}
	sentry := errorreporttest.New(t)
	rep, err := errorreport.New(sentry.DSN(), nil, "test", nil)
	if err != nil {
		t.Fatal(err)
	}
	ns := testtemporal.Namespace(t)
	c, err := client.Dial(client.Options{HostPort: testtemporal.Address(t), Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, c, nil, rep, func(w sdkworker.Registry) {
			w.RegisterWorkflowWithOptions(failingWorkflow, workflow.RegisterOptions{Name: "failing"})
			w.RegisterActivityWithOptions(failing, activity.RegisterOptions{Name: "failing"})
		})
	}()
	defer func() { stop(); <-done }() //nolint:errcheck // Run's result after stop is not under test

	for _, tc := range []struct{ id, kind string }{{"run-11111111-2222-3333-4444-555555555555", "untyped"}, {"run-typed", "typed"}} {
		r, err := c.ExecuteWorkflow(context.Background(), client.StartWorkflowOptions{ID: tc.id, TaskQueue: TaskQueue}, "failing", tc.kind)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Get(context.Background(), nil); err == nil {
			t.Fatalf("%s: the workflow succeeded", tc.kind)
		}
	}
	rep.Flush(10 * time.Second)
	got := sentry.Received()
	// The untyped activity error and both workflows' failures; not the typed activity error.
	if n := sentry.Events(); n != 3 {
		t.Fatalf("want 3 events, got %d:\n%s", n, got)
	}
	if strings.Contains(got, leakedToken) {
		t.Fatalf("an event carries the token:\n%s", got)
	}
	for _, want := range []string{`"run_id":"11111111-2222-3333-4444-555555555555"`, `"component":"activity failing"`, `"component":"workflow failing"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the events lack %s:\n%s", want, got)
		}
	}
	if strings.Count(got, `"component":"activity failing"`) != 1 {
		t.Errorf("the typed refusal was reported:\n%s", got)
	}
}
