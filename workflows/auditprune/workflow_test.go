package auditprune_test

import (
	"context"
	"os"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	acts "github.com/guilds/guilds/activities/auditprune"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/workflows/auditprune"
)

func TestMain(m *testing.M) { os.Exit(testtemporal.Main(m)) }

// The schedule exists once however many workers ensure it, and its first
// run, started at creation, prunes the old events.
func TestScheduleEnsuredAndPrunes(t *testing.T) {
	ns := testtemporal.Namespace(t)
	c, err := client.Dial(client.Options{HostPort: testtemporal.Address(t), Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := db.Exec(ctx, `INSERT INTO audit_events (at, action) VALUES (now() - interval '40 days', 'binding'), (now(), 'binding')`); err != nil {
		t.Fatal(err)
	}
	tq := testtemporal.TaskQueue(t)
	w := sdkworker.New(c, tq, sdkworker.Options{})
	auditprune.Register(w, &acts.Activities{DB: db, Retention: 30 * 24 * time.Hour})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	for range 2 {
		if err := auditprune.EnsureSchedule(ctx, c, tq); err != nil {
			t.Fatal(err)
		}
	}
	h := c.ScheduleClient().GetHandle(ctx, auditprune.ScheduleID)
	t.Cleanup(func() { _ = h.Delete(context.Background()) })
	// The run the creation started: the schedule names it once it started.
	var started *client.ScheduleWorkflowExecution
	for started == nil {
		d, err := h.Describe(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if d.Schedule.Spec.Intervals[0].Every != auditprune.Every {
			t.Fatalf("spec %+v", d.Schedule.Spec)
		}
		for _, a := range d.Info.RecentActions {
			started = a.StartWorkflowResult
		}
		for _, r := range d.Info.RunningWorkflows {
			started = &r
		}
		if started == nil {
			select {
			case <-ctx.Done():
				t.Fatal("the schedule started no prune")
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	var deleted int64
	if err := c.GetWorkflow(ctx, started.WorkflowID, started.FirstExecutionRunID).Get(ctx, &deleted); err != nil || deleted != 1 {
		t.Fatalf("the prune deleted %d, %v", deleted, err)
	}
	var left int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM audit_events`).Scan(&left); err != nil || left != 1 {
		t.Fatalf("%d events left, %v", left, err)
	}
}
