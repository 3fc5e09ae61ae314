package schedule_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"github.com/guilds/guilds/internal/schedules"
	"github.com/guilds/guilds/internal/validation"
	"github.com/guilds/guilds/workflows/run"
	"github.com/guilds/guilds/workflows/schedule"
)

const instruction = "Read the **overnight** alerts and summarise them."

func (e *env) create(in schedules.New) schedules.Schedule {
	e.t.Helper()
	in.AgentID = e.agent
	s, err := e.mgr.Create(context.Background(), e.db, in)
	if err != nil {
		e.t.Fatalf("create: %v", err)
	}
	e.t.Cleanup(func() { _ = e.mgr.Delete(context.Background(), e.db, s) })
	return s
}

func cronInput(expr string) schedules.New {
	return schedules.New{Kind: schedules.KindCron, Cron: expr, Description: "overnight alerts", Instruction: instruction}
}

// A cron schedule is a Temporal Schedule with the platform's id, spec,
// overlap policy, memo and search attributes; triggering it runs the agent
// with trigger schedule and the instruction as the opening message; pause,
// resume and delete act on the Schedule and the row together.
func TestCronScheduleLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	ctx := context.Background()
	s := e.create(cronInput("0 9 * * 1-5"))
	h := e.c.ScheduleClient().GetHandle(ctx, schedule.ScheduleID(s.ID))
	d, err := h.Describe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := d.Schedule.Spec.CronExpressions; len(got) != 1 || got[0] != "0 9 * * 1-5" {
		// Temporal compiles the string into a calendar; it keeps it in its
		// structured form, so compare the next times instead when absent.
		if len(d.Schedule.Spec.Calendars) == 0 {
			t.Fatalf("spec %+v", d.Schedule.Spec)
		}
	}
	if d.Schedule.Policy.Overlap != enumspb.SCHEDULE_OVERLAP_POLICY_SKIP {
		t.Fatalf("overlap %v", d.Schedule.Policy.Overlap)
	}
	if v, ok := d.TypedSearchAttributes.GetKeyword(run.SAAgent); !ok || v != e.agent {
		t.Fatalf("agent search attribute %q", v)
	}
	if _, ok := d.Memo.GetFields()["organisation"]; !ok {
		t.Fatalf("memo %v", d.Memo)
	}
	// Temporal and the row agree on the next wake-up.
	if s.NextRunAt == nil || len(d.Info.NextActionTimes) == 0 || !d.Info.NextActionTimes[0].Equal(*s.NextRunAt) {
		t.Fatalf("next: row %v, Temporal %v", s.NextRunAt, d.Info.NextActionTimes)
	}

	if err := e.mgr.Trigger(ctx, s); err != nil {
		t.Fatal(err)
	}
	var runID string
	eventually(t, 60*time.Second, "the triggered run to complete", func() bool {
		err := e.db.QueryRow(ctx, `SELECT id FROM runs WHERE agent_id = $1 AND trigger = 'schedule' AND status = 'completed'`, e.agent).Scan(&runID)
		return err == nil
	})
	openings, _ := e.model.requests()
	if len(openings) != 1 || openings[0] != instruction {
		t.Fatalf("model saw openings %q", openings)
	}
	var first string
	if err := e.db.QueryRow(ctx, `SELECT content FROM messages WHERE run_id = $1 AND seq = 1`, runID).Scan(&first); err != nil || first != instruction {
		t.Fatalf("opening message %q %v", first, err)
	}
	if d, err := h.Describe(ctx); err == nil && len(d.Info.RecentActions) > 0 && d.Info.RecentActions[0].StartWorkflowResult != nil {
		e.recordHistory(d.Info.RecentActions[0].StartWorkflowResult.WorkflowID, "scheduled_run.json")
	}
	got, _ := schedules.Get(ctx, e.db, s.ID)
	if got.LastRunID == nil || *got.LastRunID != runID || got.LastRunAt == nil {
		t.Fatalf("row after firing %+v", got)
	}

	p, err := e.mgr.Pause(ctx, e.db, got)
	if err != nil || p.State != schedules.StatePaused || p.NextRunAt != nil {
		t.Fatalf("pause %+v %v", p, err)
	}
	if d, _ := h.Describe(ctx); !d.Schedule.State.Paused {
		t.Fatal("Temporal schedule not paused")
	}
	r, err := e.mgr.Resume(ctx, e.db, p)
	if err != nil || r.State != schedules.StateActive || r.NextRunAt == nil || !r.NextRunAt.After(time.Now()) {
		t.Fatalf("resume %+v %v", r, err)
	}
	if d, _ := h.Describe(ctx); d.Schedule.State.Paused {
		t.Fatal("Temporal schedule still paused")
	}
	if err := e.mgr.Delete(ctx, e.db, r); err != nil {
		t.Fatal(err)
	}
	var nf *serviceerror.NotFound
	if _, err := h.Describe(ctx); !errors.As(err, &nf) {
		t.Fatalf("describe after delete: %v", err)
	}
	if n := e.count(`SELECT count(*) FROM schedules`); n != 0 {
		t.Fatalf("%d rows after delete", n)
	}
}

// A firing while the schedule's run is still going is skipped: Temporal
// counts it as skipped for overlap and no second run is created.
func TestOverlapSkip(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	ctx := context.Background()
	e.model.hold = make(chan struct{})
	s := e.create(cronInput("0 3 1 1 *"))
	if err := e.mgr.Trigger(ctx, s); err != nil {
		t.Fatal(err)
	}
	eventually(t, 60*time.Second, "the first run's model turn", func() bool { o, _ := e.model.requests(); return len(o) == 1 })
	if err := e.mgr.Trigger(ctx, s); err != nil {
		t.Fatal(err)
	}
	h := e.c.ScheduleClient().GetHandle(ctx, schedule.ScheduleID(s.ID))
	eventually(t, 30*time.Second, "the second trigger to be skipped", func() bool {
		d, err := h.Describe(ctx)
		return err == nil && d.Info.NumActionsSkippedOverlap >= 1
	})
	close(e.model.hold)
	eventually(t, 60*time.Second, "the run to complete", func() bool {
		return e.count(`SELECT count(*) FROM runs WHERE status = 'completed'`) == 1
	})
	if n := e.count(`SELECT count(*) FROM runs`); n != 1 {
		t.Fatalf("%d runs", n)
	}
}

// Every bad input is refused naming its field, and nothing is created in
// Postgres or Temporal.
func TestBadInputsCreateNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := context.Background()
	window := schedules.New{Kind: schedules.KindWindow, Timezone: "Europe/Paris", Start: "09:00", End: "17:00", MaxWakes: 3,
		Description: "d", Instruction: "i"}
	for _, tc := range []struct {
		in    schedules.New
		field string
	}{
		{cronInput("0 9 * * 1-5 2027"), "cron"},
		{cronInput("*/4 * * * *"), "cron"},
		{func() schedules.New { w := window; w.Timezone = "Europe/Atlantis"; return w }(), "timezone"},
		{func() schedules.New { w := window; w.Start, w.End = "17:00", "09:00"; return w }(), "end"},
		{func() schedules.New { w := window; w.MaxWakes = 0; return w }(), "max_wakes"},
		{func() schedules.New { w := window; w.MaxWakes = 100; return w }(), "max_wakes"},
		{func() schedules.New { c := cronInput("0 9 * * *"); c.Description = strings.Repeat("x", 401); return c }(), "description"},
		{func() schedules.New { c := cronInput("0 9 * * *"); c.Instruction = strings.Repeat("x", 2001); return c }(), "instruction"},
	} {
		tc.in.AgentID = e.agent
		_, err := e.mgr.Create(ctx, e.db, tc.in)
		var verr *validation.Error
		if !errors.As(err, &verr) || len(verr.Problems) != 1 || verr.Problems[0].Field != tc.field {
			t.Errorf("%+v: got %v, want a problem on %s", tc.in, err, tc.field)
		}
	}
	if n := e.count(`SELECT count(*) FROM schedules`); n != 0 {
		t.Fatalf("%d rows created", n)
	}
	iter, err := e.c.ScheduleClient().List(ctx, client.ScheduleListOptions{Query: "GuildsAgent = '" + e.agent + "'"})
	if err != nil {
		t.Fatal(err)
	}
	if iter.HasNext() {
		t.Fatal("a Temporal schedule was created")
	}
	// The per-agent limit: refused with the limit named, nothing more made.
	e.mgr.MaxPerAgent = 1
	e.create(cronInput("0 9 * * *"))
	_, err = e.mgr.Create(ctx, e.db, schedules.New{AgentID: e.agent, Kind: schedules.KindCron, Cron: "0 10 * * *", Description: "d", Instruction: "i"})
	var limit *schedules.LimitError
	if !errors.As(err, &limit) || !strings.Contains(err.Error(), "GUILDS_MAX_SCHEDULES_PER_AGENT") {
		t.Fatalf("over the limit: %v", err)
	}
	if n := e.count(`SELECT count(*) FROM schedules`); n != 1 {
		t.Fatalf("%d rows", n)
	}
}

// An agent schedules itself from a direct run: schedule_create_cron in the
// run stores a schedule created by that run, with its Temporal Schedule.
func TestScheduleCreatedFromARun(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	ctx := context.Background()
	e.model.call = [2]string{"schedule_create_cron", `{"cron":"0 7 * * 1","description":"monday plan","instruction":"Plan the week."}`}
	id, err := run.Start(ctx, e.c, e.db, run.Input{AgentID: e.agent, Message: "remind yourself every Monday", TaskQueue: e.queue})
	if err != nil {
		t.Fatal(err)
	}
	var res run.Result
	if err := e.c.GetWorkflow(ctx, run.WorkflowID(id), "").Get(ctx, &res); err != nil || res.Status != "completed" {
		t.Fatalf("run %+v %v", res, err)
	}
	var result string
	if err := e.db.QueryRow(ctx, `SELECT content FROM messages WHERE run_id = $1 AND role = 'tool'`, id).Scan(&result); err != nil {
		t.Fatal(err)
	}
	list, err := schedules.ListByAgent(ctx, e.db, e.agent)
	if err != nil || len(list) != 1 {
		t.Fatalf("schedules %+v %v (tool said %s)", list, err, result)
	}
	s := list[0]
	t.Cleanup(func() { _ = e.mgr.Delete(context.Background(), e.db, s) })
	if s.CreatedByRun == nil || *s.CreatedByRun != id || !strings.Contains(result, "id: "+s.ID) {
		t.Fatalf("created by %v, tool said %s", s.CreatedByRun, result)
	}
	if _, err := e.c.ScheduleClient().GetHandle(ctx, schedule.ScheduleID(s.ID)).Describe(ctx); err != nil {
		t.Fatalf("no Temporal schedule: %v", err)
	}
}
