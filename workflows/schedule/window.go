package schedule

import (
	"math/rand"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	schedact "github.com/guilds/guilds/activities/schedule"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/schedules"
	runwf "github.com/guilds/guilds/workflows/run"
)

// WindowParams is the input of a window's workflow; Paused, LastWake and
// Done carry over from one day's execution to the next.
type WindowParams struct {
	ScheduleID     string `json:"schedule_id"`
	OrganisationID string `json:"organisation_id"`
	GuildID        string `json:"guild_id"`
	AgentID        string `json:"agent_id"`
	Timezone       string `json:"timezone"`
	Start          string `json:"start"`
	End            string `json:"end"`
	MaxWakes       int    `json:"max_wakes"`
	Paused         bool   `json:"paused"`
	// LastWake is the latest wake-up so far: the next is at least MinGap later.
	LastWake *time.Time `json:"last_wake,omitempty"`
	// Done is the end of the last window planned: the next plan starts there.
	Done *time.Time `json:"done,omitempty"`
}

// UpdateSetPaused pauses (true) or resumes (false) a window; it answers with
// the next wake-up of the current plan (nil when paused or none is left
// today).
const UpdateSetPaused = "set_paused"

// QueryPlan answers with the wake-ups still planned.
const QueryPlan = "plan"

// bookkeepingOptions: one UPDATE, retried freely.
var bookkeepingOptions = workflow.ActivityOptions{
	Summary:             "record the next wake-up",
	StartToCloseTimeout: 30 * time.Second, // one statement
	RetryPolicy: &temporal.RetryPolicy{
		InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute, MaximumAttempts: 20,
	},
}

// maxDaysPerExecution: an execution plans at most this many windows (one
// normally; more when the wake-ups of a window all fall before now) before
// it continues as new.
const maxDaysPerExecution = 3

// Window sleeps to the random wake-ups of one daily window and starts a
// ScheduledRun at each; it continues as new after each day's window.
func Window(ctx workflow.Context, p WindowParams) error {
	w, err := schedules.Schedule{Timezone: p.Timezone, Start: p.Start, End: p.End, MaxWakes: p.MaxWakes}.WindowSpec()
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), "BadWindow", nil)
	}
	var plan []time.Time
	planned := false // an update arriving with the start waits for the first plan
	next := func() *time.Time {
		now := workflow.Now(ctx)
		for _, t := range plan {
			if !t.Before(now) && !p.Paused {
				t := t
				return &t
			}
		}
		return nil
	}
	if err := workflow.SetUpdateHandler(ctx, UpdateSetPaused, func(ctx workflow.Context, paused bool) (*time.Time, error) {
		p.Paused = paused
		if err := workflow.Await(ctx, func() bool { return planned }); err != nil {
			return nil, err
		}
		return next(), nil
	}); err != nil {
		return err
	}
	if err := workflow.SetQueryHandler(ctx, QueryPlan, func() ([]time.Time, error) { return plan, nil }); err != nil {
		return err
	}
	record := func(t *time.Time) {
		actx := workflow.WithActivityOptions(ctx, bookkeepingOptions)
		if err := workflow.ExecuteActivity(actx, schedact.RecordNextName, schedact.RecordNextInput{ScheduleID: p.ScheduleID, Next: t}).Get(actx, nil); err != nil {
			workflow.GetLogger(ctx).Warn("next wake-up not recorded", "schedule_id", p.ScheduleID, "error", err)
		}
	}

	for day := 0; day < maxDaysPerExecution; day++ {
		start, end := nextSpan(w, workflow.Now(ctx), p.Done)
		var offsets []time.Time
		k := p.MaxWakes
		if err := workflow.SideEffect(ctx, func(workflow.Context) any {
			return schedules.Wakes(start, end, k, rand.New(rand.NewSource(time.Now().UnixNano()))) //nolint:gosec // wake-up times, not a secret
		}).Get(&offsets); err != nil {
			return err
		}
		now := workflow.Now(ctx)
		plan = plan[:0]
		for _, t := range offsets {
			if t.Before(now) || (p.LastWake != nil && t.Sub(*p.LastWake) < schedules.MinGap) {
				continue // the window opened before this execution, or too close to the last wake
			}
			plan = append(plan, t)
		}
		p.Done = &end
		if len(plan) > 0 || day == maxDaysPerExecution-1 {
			planned = true
		}
		for i, t := range plan {
			if !p.Paused {
				record(&t)
			}
			if d := t.Sub(workflow.Now(ctx)); d > 0 {
				if err := workflow.Sleep(ctx, d); err != nil {
					return err
				}
			}
			if p.Paused {
				continue
			}
			wake := t
			p.LastWake = &wake
			var after *time.Time
			if i+1 < len(plan) {
				after = &plan[i+1]
			}
			startFiring(ctx, p, wake, after)
		}
		if len(plan) > 0 {
			break
		}
	}
	if !p.Paused {
		record(nil) // the next day's plan records its first wake-up
	}
	if err := workflow.Await(ctx, func() bool { return workflow.AllHandlersFinished(ctx) }); err != nil {
		return err
	}
	return workflow.NewContinueAsNewError(ctx, WindowName, p)
}

// nextSpan is the first window that has not ended by now, clipped to start
// no earlier than done (the end of the window already planned).
func nextSpan(w schedules.Window, now time.Time, done *time.Time) (time.Time, time.Time) {
	local := now.In(w.Location)
	for back := -1; back < 3; back++ {
		d := time.Date(local.Year(), local.Month(), local.Day()+back, 12, 0, 0, 0, time.UTC)
		s, e := w.Span(d.Year(), d.Month(), d.Day())
		if done != nil && s.Before(*done) {
			s = *done
		}
		if e.After(now) && e.After(s) {
			return s, e
		}
	}
	// Unreachable for a valid window: tomorrow's always ends after now.
	d := local.AddDate(0, 0, 1)
	return w.Span(d.Year(), d.Month(), d.Day())
}

// startFiring starts the ScheduledRun of a wake-up as an abandoned child:
// the window goes on while the run runs, and its overlap check (the
// previous run still going) is made by the firing's activity.
func startFiring(ctx workflow.Context, p WindowParams, due time.Time, next *time.Time) {
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{
		WorkflowID:        firingID(p.ScheduleID, due),
		StaticSummary:     "scheduled wake-up",
		ParentClosePolicy: enumspb.PARENT_CLOSE_POLICY_ABANDON,
		TypedSearchAttributes: temporal.NewSearchAttributes(
			runwf.SAOrganisation.ValueSet(p.OrganisationID),
			runwf.SAGuild.ValueSet(p.GuildID),
			runwf.SAAgent.ValueSet(p.AgentID),
			runwf.SATrigger.ValueSet(runs.TriggerSchedule),
		),
	})
	f := workflow.ExecuteChildWorkflow(cctx, ScheduledRunName, ScheduledRunParams{ScheduleID: p.ScheduleID, Due: &due, Next: next})
	if err := f.GetChildWorkflowExecution().Get(ctx, nil); err != nil {
		workflow.GetLogger(ctx).Warn("wake-up not started", "schedule_id", p.ScheduleID, "due", due, "error", err)
	}
}
