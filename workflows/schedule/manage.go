package schedule

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/schedules"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/worker"
	runwf "github.com/guilds/guilds/workflows/run"
)

// Manager creates, pauses, resumes, triggers and deletes schedules in
// Postgres and Temporal together. Call its methods inside the transaction
// that writes the row: when Temporal refuses, the error rolls the row back;
// when the commit fails after Temporal accepted, reconciliation removes what
// Temporal holds for a row that does not exist.
type Manager struct {
	Temporal client.Client
	// TaskQueue defaults to worker.TaskQueue.
	TaskQueue string
	// MaxPerAgent bounds an agent's schedules (schedules.DefaultMaxPerAgent
	// when zero).
	MaxPerAgent int
	Log         *slog.Logger
}

// ErrNoTemporal: the process has no Temporal client.
var ErrNoTemporal = errors.New("schedules need Temporal, which this process is not connected to")

func (m *Manager) queue() string {
	if m.TaskQueue != "" {
		return m.TaskQueue
	}
	return worker.TaskQueue
}

func (m *Manager) max() int {
	if m.MaxPerAgent > 0 {
		return m.MaxPerAgent
	}
	return schedules.DefaultMaxPerAgent
}

func (m *Manager) log() *slog.Logger {
	if m.Log != nil {
		return m.Log
	}
	return slog.Default()
}

// Create validates in, stores the row and creates its Temporal side. Every
// bad field is refused before anything is written.
func (m *Manager) Create(ctx context.Context, db store.DB, in schedules.New) (schedules.Schedule, error) {
	checked, err := schedules.Check(in)
	if err != nil {
		return schedules.Schedule{}, err
	}
	if m == nil || m.Temporal == nil {
		return schedules.Schedule{}, ErrNoTemporal
	}
	var next *time.Time
	if checked.Kind == schedules.KindCron && !checked.Paused {
		if n, ok := checked.Cron.Next(time.Now()); ok {
			next = &n
		}
	}
	s, err := schedules.Insert(ctx, db, checked, m.max(), next)
	if err != nil {
		return schedules.Schedule{}, err
	}
	if err := m.ensure(ctx, s); err != nil {
		return schedules.Schedule{}, err
	}
	if s.Kind == schedules.KindWindow && !s.Paused {
		// Ask the new workflow for its first wake-up; without a worker
		// answering soon the row gets it when the workflow records it.
		uctx, cancel := context.WithTimeout(ctx, windowAnswer)
		defer cancel()
		next, err := m.windowSetPaused(uctx, s.ID, false)
		switch {
		case err != nil:
			m.log().Info("the new window workflow did not answer yet; it records its first wake-up itself", "schedule_id", s.ID, "error", err)
		case next != nil:
			if err := schedules.SetNext(ctx, db, s.ID, next); err != nil {
				return schedules.Schedule{}, err
			}
			s.NextRunAt = next
		}
	}
	return s, nil
}

// windowAnswer bounds the wait for a window workflow's first answer.
const windowAnswer = 5 * time.Second

// windowSetPaused sends the set_paused update and returns the next wake-up.
func (m *Manager) windowSetPaused(ctx context.Context, id string, paused bool) (*time.Time, error) {
	h, err := m.Temporal.UpdateWorkflow(ctx, client.UpdateWorkflowOptions{
		WorkflowID: WindowWorkflowID(id), UpdateName: UpdateSetPaused, Args: []any{paused},
		WaitForStage: client.WorkflowUpdateStageCompleted,
	})
	if err != nil {
		return nil, err
	}
	var next *time.Time
	err = h.Get(ctx, &next)
	return next, err
}

// ensure creates the Temporal side of a row; what already exists is left
// as it is, so a retry or a reconciliation never makes two.
func (m *Manager) ensure(ctx context.Context, s schedules.Schedule) error {
	switch s.Kind {
	case schedules.KindCron:
		_, err := m.Temporal.ScheduleClient().Create(ctx, m.cronOptions(s))
		if errors.Is(err, temporal.ErrScheduleAlreadyRunning) {
			return nil
		}
		return wrapTemporal("create the Temporal schedule", err)
	case schedules.KindWindow:
		_, err := m.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
			ID: WindowWorkflowID(s.ID), TaskQueue: m.queue(),
			WorkflowIDConflictPolicy: enumspb.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
			StaticSummary:            "daily window: " + s.Description,
			Memo:                     memo(s),
			TypedSearchAttributes:    searchAttributes(s),
		}, WindowName, WindowParams{ScheduleID: s.ID, OrganisationID: s.OrganisationID, GuildID: s.GuildID, AgentID: s.AgentID,
			Timezone: s.Timezone, Start: s.Start, End: s.End, MaxWakes: s.MaxWakes, Paused: s.Paused})
		return wrapTemporal("start the window workflow", err)
	}
	return fmt.Errorf("schedule %s has unknown kind %q", s.ID, s.Kind)
}

func memo(s schedules.Schedule) map[string]any {
	return map[string]any{"guilds": "schedule", "schedule_id": s.ID, "organisation": s.OrganisationID,
		"guild": s.GuildID, "agent": s.AgentID, "description": s.Description}
}

func searchAttributes(s schedules.Schedule) temporal.SearchAttributes {
	return temporal.NewSearchAttributes(
		runwf.SAOrganisation.ValueSet(s.OrganisationID),
		runwf.SAGuild.ValueSet(s.GuildID),
		runwf.SAAgent.ValueSet(s.AgentID),
		runwf.SATrigger.ValueSet(runs.TriggerSchedule),
	)
}

func (m *Manager) cronOptions(s schedules.Schedule) client.ScheduleOptions {
	return client.ScheduleOptions{
		ID:   ScheduleID(s.ID),
		Spec: client.ScheduleSpec{CronExpressions: []string{s.Cron}},
		Action: &client.ScheduleWorkflowAction{
			// Temporal appends the due time, so each firing has its own id.
			ID:                    "guilds-scheduled-" + s.ID,
			Workflow:              ScheduledRunName,
			Args:                  []any{ScheduledRunParams{ScheduleID: s.ID}},
			TaskQueue:             m.queue(),
			Memo:                  memo(s),
			TypedSearchAttributes: searchAttributes(s),
			StaticSummary:         "scheduled wake-up: " + s.Description,
		},
		Overlap:               enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
		CatchupWindow:         time.Minute, // a wake-up missed by more than this is skipped, not run late
		Paused:                s.Paused,
		Note:                  s.Description,
		Memo:                  memo(s),
		TypedSearchAttributes: searchAttributes(s),
	}
}

// Pause stops a schedule firing.
func (m *Manager) Pause(ctx context.Context, db store.DB, s schedules.Schedule) (schedules.Schedule, error) {
	return m.setPaused(ctx, db, s, true)
}

// Resume starts it firing again; next_run_at is recomputed from now.
func (m *Manager) Resume(ctx context.Context, db store.DB, s schedules.Schedule) (schedules.Schedule, error) {
	return m.setPaused(ctx, db, s, false)
}

func (m *Manager) setPaused(ctx context.Context, db store.DB, s schedules.Schedule, paused bool) (schedules.Schedule, error) {
	if m == nil || m.Temporal == nil {
		return schedules.Schedule{}, ErrNoTemporal
	}
	var next *time.Time
	switch s.Kind {
	case schedules.KindCron:
		h := m.Temporal.ScheduleClient().GetHandle(ctx, ScheduleID(s.ID))
		var err error
		if paused {
			err = h.Pause(ctx, client.SchedulePauseOptions{Note: "paused by guilds"})
		} else {
			err = h.Unpause(ctx, client.ScheduleUnpauseOptions{Note: "resumed by guilds"})
			if c, cerr := s.CronSpec(); cerr == nil {
				if n, ok := c.Next(time.Now()); ok {
					next = &n
				}
			}
		}
		if isNotFound(err) {
			// Lost behind the platform's back: recreate it in the new state.
			s.Paused = paused
			err = m.ensure(ctx, s)
		}
		if err != nil {
			return schedules.Schedule{}, wrapTemporal("pause or resume the Temporal schedule", err)
		}
	case schedules.KindWindow:
		var err error
		next, err = m.windowSetPaused(ctx, s.ID, paused)
		if isNotFound(err) {
			s.Paused = paused
			return m.recreate(ctx, db, s)
		}
		if err != nil {
			return schedules.Schedule{}, wrapTemporal("pause or resume the window workflow", err)
		}
	}
	if paused {
		next = nil
	}
	return schedules.SetPaused(ctx, db, s.ID, paused, next)
}

func (m *Manager) recreate(ctx context.Context, db store.DB, s schedules.Schedule) (schedules.Schedule, error) {
	if _, err := schedules.SetPaused(ctx, db, s.ID, s.Paused, nil); err != nil {
		return schedules.Schedule{}, err
	}
	if err := m.ensure(ctx, s); err != nil {
		return schedules.Schedule{}, err
	}
	return schedules.Get(ctx, db, s.ID)
}

// Trigger fires a schedule now, once, by the same path as its wake-ups (a
// run still going makes the firing skip).
func (m *Manager) Trigger(ctx context.Context, s schedules.Schedule) error {
	if m == nil || m.Temporal == nil {
		return ErrNoTemporal
	}
	if s.Kind == schedules.KindCron {
		err := m.Temporal.ScheduleClient().GetHandle(ctx, ScheduleID(s.ID)).Trigger(ctx, client.ScheduleTriggerOptions{
			Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP})
		if isNotFound(err) {
			if err = m.ensure(ctx, s); err == nil {
				err = m.Temporal.ScheduleClient().GetHandle(ctx, ScheduleID(s.ID)).Trigger(ctx, client.ScheduleTriggerOptions{
					Overlap: enumspb.SCHEDULE_OVERLAP_POLICY_SKIP})
			}
		}
		return wrapTemporal("trigger the Temporal schedule", err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	_, err := m.Temporal.ExecuteWorkflow(ctx, client.StartWorkflowOptions{
		ID: fmt.Sprintf("guilds-window-%s-trigger-%d", s.ID, now.UnixNano()), TaskQueue: m.queue(),
		StaticSummary: "triggered wake-up", TypedSearchAttributes: searchAttributes(s),
	}, ScheduledRunName, ScheduledRunParams{ScheduleID: s.ID, Due: &now, Next: s.NextRunAt})
	return wrapTemporal("start the triggered wake-up", err)
}

// Delete removes the Temporal side, then the row. A Temporal side already
// gone is not an error.
func (m *Manager) Delete(ctx context.Context, db store.DB, s schedules.Schedule) error {
	if m == nil || m.Temporal == nil {
		return ErrNoTemporal
	}
	if err := m.removeTemporal(ctx, s.ID, s.Kind); err != nil {
		return err
	}
	return schedules.Delete(ctx, db, s.ID)
}

// RemoveAgent removes from Temporal every schedule of an agent about to be
// deleted (its rows go with the agent).
func (m *Manager) RemoveAgent(ctx context.Context, db store.DB, agentID string) error {
	if m == nil || m.Temporal == nil {
		return nil // reconciliation removes them once a worker runs
	}
	ids, err := schedules.IDsOfAgent(ctx, db, agentID)
	if err != nil {
		return err
	}
	for id, kind := range ids {
		if err := m.removeTemporal(ctx, id, kind); err != nil {
			return err
		}
	}
	return nil
}

func (m *Manager) removeTemporal(ctx context.Context, id string, kind schedules.Kind) error {
	var err error
	switch kind {
	case schedules.KindCron:
		err = m.Temporal.ScheduleClient().GetHandle(ctx, ScheduleID(id)).Delete(ctx)
	case schedules.KindWindow:
		err = m.Temporal.TerminateWorkflow(ctx, WindowWorkflowID(id), "", "schedule deleted")
	}
	if err != nil && !isNotFound(err) {
		return wrapTemporal("delete the schedule from Temporal", err)
	}
	return nil
}

func isNotFound(err error) bool {
	var nf *serviceerror.NotFound
	return errors.As(err, &nf)
}

func wrapTemporal(what string, err error) error {
	if err == nil {
		return nil
	}
	var invalid *serviceerror.InvalidArgument
	if errors.As(err, &invalid) && strings.Contains(strings.ToLower(invalid.Error()), "search attribute") {
		return fmt.Errorf("%w: %s", runwf.ErrSearchAttributesMissing, invalid.Error())
	}
	return fmt.Errorf("%s: %w", what, err)
}
