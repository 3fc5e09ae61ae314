package schedule_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	schedact "github.com/guilds/guilds/activities/schedule"
	"github.com/guilds/guilds/internal/schedules"
	"github.com/guilds/guilds/workflows/schedule"
)

// windowDay runs one day's execution of a window workflow under the test
// suite's time skipping, from start, and returns the wake-ups it fired and
// the parameters it continued as new with.
type windowDay struct {
	wakes   []time.Time
	nexts   []*time.Time
	carried schedule.WindowParams
}

func runWindowDay(t *testing.T, start time.Time, p schedule.WindowParams, setup func(*testsuite.TestWorkflowEnvironment)) windowDay {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	env := s.NewTestWorkflowEnvironment()
	env.SetStartTime(start)
	var out windowDay
	env.RegisterWorkflowWithOptions(schedule.Window, workflow.RegisterOptions{Name: schedule.WindowName})
	// The firing as a plain recorder: what a wake-up starts is tested on
	// the dev server; here only when it starts.
	env.RegisterWorkflowWithOptions(func(ctx workflow.Context, in schedule.ScheduledRunParams) (schedule.ScheduledRunResult, error) {
		if in.Due == nil || !workflow.Now(ctx).Equal(*in.Due) {
			return schedule.ScheduledRunResult{}, errors.New("started off its due time")
		}
		out.wakes = append(out.wakes, *in.Due)
		return schedule.ScheduledRunResult{}, nil
	}, workflow.RegisterOptions{Name: schedule.ScheduledRunName})
	env.RegisterActivityWithOptions(func(ctx context.Context, in schedact.RecordNextInput) error {
		out.nexts = append(out.nexts, in.Next)
		return nil
	}, activity.RegisterOptions{Name: schedact.RecordNextName})
	if setup != nil {
		setup(env)
	}
	env.ExecuteWorkflow(schedule.WindowName, p)
	if !env.IsWorkflowCompleted() {
		t.Fatal("the day's execution did not end")
	}
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("ended with %v, want continue-as-new", err)
	}
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &out.carried); err != nil {
		t.Fatal(err)
	}
	return out
}

func checkWakes(t *testing.T, wakes []time.Time, from, to time.Time, want int) {
	t.Helper()
	if len(wakes) != want {
		t.Fatalf("%d wake-ups, want %d: %v", len(wakes), want, wakes)
	}
	for i, w := range wakes {
		if w.Before(from) || !w.Before(to) {
			t.Fatalf("wake-up %v outside [%v, %v)", w.UTC(), from.UTC(), to.UTC())
		}
		if i > 0 && w.Sub(wakes[i-1]) < schedules.MinGap {
			t.Fatalf("wake-ups %v and %v are %v apart", wakes[i-1].UTC(), w.UTC(), w.Sub(wakes[i-1]))
		}
	}
}

func utc(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, time.UTC)
}

// A night window 22:00 to 02:00+1 in Paris over the spring change (29 March
// 2026, 02:00 → 03:00): that night it ends at 03:00 CEST, 01:00 UTC, three
// real hours; the next night it is four hours again, in CEST. Each day ends
// by continuing as new with the end of its window, and the next day's first
// wake-up is at least five minutes after the last.
func TestWindowAcrossMidnightAndSpringForward(t *testing.T) {
	p := schedule.WindowParams{ScheduleID: "s1", Timezone: "Europe/Paris", Start: "22:00", End: "02:00+1", MaxWakes: 5}
	day1 := runWindowDay(t, utc(2026, 3, 28, 19, 0), p, nil) // 20:00 CET
	checkWakes(t, day1.wakes, utc(2026, 3, 28, 21, 0), utc(2026, 3, 29, 1, 0), 5)
	if c := day1.carried; c.Done == nil || !c.Done.Equal(utc(2026, 3, 29, 1, 0)) || c.LastWake == nil || !c.LastWake.Equal(day1.wakes[4]) {
		t.Fatalf("carried %+v", c)
	}
	if len(day1.nexts) == 0 || day1.nexts[0] == nil || !day1.nexts[0].Equal(day1.wakes[0]) {
		t.Fatalf("first recorded next %v, first wake %v", day1.nexts, day1.wakes[0])
	}
	day2 := runWindowDay(t, *day1.carried.Done, day1.carried, nil)
	checkWakes(t, day2.wakes, utc(2026, 3, 29, 20, 0), utc(2026, 3, 30, 0, 0), 5)
}

// A window 01:00–04:00 in Paris on the autumn change (25 October 2026,
// 03:00 → 02:00) is four real hours, 23:00 to 03:00 UTC; the day before it
// is three, 23:00 to 02:00 UTC.
func TestWindowFallBack(t *testing.T) {
	p := schedule.WindowParams{ScheduleID: "s2", Timezone: "Europe/Paris", Start: "01:00", End: "04:00", MaxWakes: 36}
	day := runWindowDay(t, utc(2026, 10, 24, 22, 0), p, nil) // 00:00 CEST on the 25th
	checkWakes(t, day.wakes, utc(2026, 10, 24, 23, 0), utc(2026, 10, 25, 3, 0), 36)
	before := runWindowDay(t, utc(2026, 10, 23, 22, 0), p, nil)
	checkWakes(t, before.wakes, utc(2026, 10, 23, 23, 0), utc(2026, 10, 24, 2, 0), 36)
}

// A window created while open plans only what is left of it; pausing skips
// the wake-ups until resumed, and the update answers with the next one.
func TestWindowPauseAndMidWindowStart(t *testing.T) {
	p := schedule.WindowParams{ScheduleID: "s3", Timezone: "UTC", Start: "09:00", End: "17:00", MaxWakes: 40}
	start := utc(2026, 6, 1, 13, 0)
	var pausedAt, resumedAt time.Time
	var resumedNext *time.Time
	day := runWindowDay(t, start, p, func(env *testsuite.TestWorkflowEnvironment) {
		env.RegisterDelayedCallback(func() {
			pausedAt = env.Now()
			env.UpdateWorkflow(schedule.UpdateSetPaused, "pause", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("pause rejected: %v", err) },
				OnComplete: func(v any, err error) {
					if err != nil || (v != nil && v.(*time.Time) != nil) {
						t.Errorf("pause answered %v %v", v, err)
					}
				}}, true)
		}, time.Hour)
		env.RegisterDelayedCallback(func() {
			resumedAt = env.Now()
			env.UpdateWorkflow(schedule.UpdateSetPaused, "resume", &testsuite.TestUpdateCallback{
				OnAccept: func() {}, OnReject: func(err error) { t.Errorf("resume rejected: %v", err) },
				OnComplete: func(v any, err error) {
					if err != nil {
						t.Errorf("resume: %v", err)
					}
					resumedNext, _ = v.(*time.Time)
				}}, false)
		}, 2*time.Hour)
	})
	if len(day.wakes) == 0 {
		t.Fatal("no wake-ups")
	}
	for _, w := range day.wakes {
		if w.Before(start) {
			t.Fatalf("wake-up %v before the workflow started", w)
		}
		if !w.Before(pausedAt) && w.Before(resumedAt) {
			t.Fatalf("wake-up %v while paused (%v–%v)", w, pausedAt, resumedAt)
		}
	}
	if resumedNext != nil {
		found := false
		for _, w := range day.wakes {
			found = found || w.Equal(*resumedNext)
		}
		if !found || resumedNext.Before(resumedAt) {
			t.Fatalf("resume answered %v, wakes %v", resumedNext, day.wakes)
		}
	}
	checkWakes(t, day.wakes, start, utc(2026, 6, 1, 17, 0), len(day.wakes))
}
