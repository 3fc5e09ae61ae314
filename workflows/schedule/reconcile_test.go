package schedule_test

import (
	"context"
	"errors"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/guilds/guilds/internal/schedules"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/workflows/run"
	"github.com/guilds/guilds/workflows/schedule"
)

// isolated moves the env to a namespace of its own (with the Guilds search
// attributes), so a reconciliation sees only this test's schedules.
func (e *env) isolated() {
	e.t.Helper()
	ns := testtemporal.Namespace(e.t)
	c := quietClient(e.t, ns)
	ctx := context.Background()
	attrs := map[string]enumspb.IndexedValueType{}
	for _, k := range []string{run.SAOrganisation.GetName(), run.SAGuild.GetName(), run.SAAgent.GetName(), run.SATrigger.GetName()} {
		attrs[k] = enumspb.INDEXED_VALUE_TYPE_KEYWORD
	}
	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{Namespace: ns, SearchAttributes: attrs}); err != nil {
		e.t.Fatal(err)
	}
	eventually(e.t, 30*time.Second, "the search attributes", func() bool {
		r, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: ns})
		return err == nil && len(r.GetCustomAttributes()) >= len(attrs)
	})
	e.c = c
	e.mgr.Temporal = c
}

// Postgres and Temporal never drift: a Schedule or window workflow removed
// behind the platform's back comes back, a paused state toggled outside
// guilds is taken by the row, and what Temporal holds for a row that
// is gone is removed. A second pass changes nothing.
func TestReconcile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	e.isolated()
	e.startWorker()
	ctx := context.Background()
	// A worker on a namespace just made takes a moment to poll it.
	eventually(t, 30*time.Second, "the worker to poll the new namespace", func() bool {
		d, err := e.c.DescribeTaskQueue(ctx, e.queue, enumspb.TASK_QUEUE_TYPE_WORKFLOW)
		return err == nil && len(d.GetPollers()) > 0
	})
	cron := e.create(cronInput("15 6 * * *"))
	win := e.create(schedules.New{Kind: schedules.KindWindow, Timezone: "Europe/Paris", Start: "00:00", End: "23:55", MaxWakes: 4,
		Description: "random check", Instruction: instruction})
	if win.NextRunAt == nil {
		v, qerr := e.c.QueryWorkflow(ctx, schedule.WindowWorkflowID(win.ID), "", schedule.QueryPlan)
		var plan []time.Time
		if qerr == nil {
			_ = v.Get(&plan)
		}
		t.Fatalf("window created without its first wake-up: %+v plan %v %v now %v", win, plan, qerr, time.Now())
	}
	h := e.c.ScheduleClient().GetHandle(ctx, schedule.ScheduleID(cron.ID))
	if err := h.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := e.c.TerminateWorkflow(ctx, schedule.WindowWorkflowID(win.ID), "", "behind the platform's back"); err != nil {
		t.Fatal(err)
	}
	r, err := e.mgr.Reconcile(ctx, e.db, time.Hour)
	if err != nil || r.Created != 2 || r.Removed != 0 {
		t.Fatalf("first pass %+v %v", r, err)
	}
	if _, err := h.Describe(ctx); err != nil {
		t.Fatalf("schedule not recreated: %v", err)
	}
	d, err := e.c.DescribeWorkflow(ctx, schedule.WindowWorkflowID(win.ID), "")
	if err != nil || d.Status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("window not restarted: %v", err)
	}
	// Idempotent: nothing more to do, whatever the list shows yet.
	if r, err := e.mgr.Reconcile(ctx, e.db, time.Hour); err != nil || r.Created != 0 {
		t.Fatalf("second pass %+v %v", r, err)
	}

	// Paused outside guilds (the CLI's toggle): the row takes the state.
	if err := h.Pause(ctx, clientPause()); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the row to take the paused state", func() bool {
		r, err := e.mgr.Reconcile(ctx, e.db, time.Hour)
		return err == nil && r.Synced == 1
	})
	if got, _ := schedules.Get(ctx, e.db, cron.ID); !got.Paused || got.NextRunAt != nil {
		t.Fatalf("row after a CLI pause %+v", got)
	}
	if err := h.Unpause(ctx, client.ScheduleUnpauseOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the row to take the resumed state", func() bool {
		r, err := e.mgr.Reconcile(ctx, e.db, time.Hour)
		return err == nil && r.Synced == 1
	})
	if got, _ := schedules.Get(ctx, e.db, cron.ID); got.Paused || got.NextRunAt == nil {
		t.Fatalf("row after a CLI resume %+v", got)
	}

	// Rows gone behind the platform's back: their Temporal sides go too,
	// once older than the grace period.
	if _, err := e.db.Exec(ctx, `DELETE FROM schedules`); err != nil {
		t.Fatal(err)
	}
	if r, err := e.mgr.Reconcile(ctx, e.db, time.Hour); err != nil || r.Removed != 0 {
		t.Fatalf("within the grace period %+v %v", r, err)
	}
	removed := 0
	eventually(t, 30*time.Second, "the orphans to be removed", func() bool {
		r, err := e.mgr.Reconcile(ctx, e.db, time.Nanosecond)
		removed += r.Removed
		return err == nil && removed == 2
	})
	var nf *serviceerror.NotFound
	if _, err := h.Describe(ctx); !errors.As(err, &nf) {
		t.Fatalf("orphan schedule: %v", err)
	}
	d, err = e.c.DescribeWorkflow(ctx, schedule.WindowWorkflowID(win.ID), "")
	if err != nil || d.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		t.Fatalf("orphan window still running: %v", err)
	}
}

// A window schedule on the dev server: triggered, it runs the agent with the
// instruction; paused, its next wake-up is cleared; resumed, it is back.
func TestWindowScheduleOnTemporal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	ctx := context.Background()
	win := e.create(schedules.New{Kind: schedules.KindWindow, Timezone: "UTC", Start: "00:00", End: "00:00+1", MaxWakes: 1,
		Description: "all day", Instruction: instruction})
	if win.NextRunAt == nil || !win.NextRunAt.After(time.Now().Add(-time.Minute)) {
		t.Fatalf("first wake-up %v", win.NextRunAt)
	}
	if err := e.mgr.Trigger(ctx, win); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the triggered run to complete", func() bool {
		return e.count(`SELECT count(*) FROM runs WHERE trigger = 'schedule' AND status = 'completed'`) == 1
	})
	if o, _ := e.model.requests(); len(o) != 1 || o[0] != instruction {
		t.Fatalf("openings %q", o)
	}
	p, err := e.mgr.Pause(ctx, e.db, win)
	if err != nil || p.NextRunAt != nil || !p.Paused {
		t.Fatalf("pause %+v %v", p, err)
	}
	r, err := e.mgr.Resume(ctx, e.db, p)
	if err != nil || r.Paused {
		t.Fatalf("resume %+v %v", r, err)
	}
	e.recordHistory(schedule.WindowWorkflowID(win.ID), "window.json")
}

func clientPause() client.SchedulePauseOptions {
	return client.SchedulePauseOptions{Note: "toggled in the CLI"}
}
