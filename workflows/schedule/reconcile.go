package schedule

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"github.com/guilds/guilds/internal/schedules"
	"github.com/guilds/guilds/internal/store"
)

// defaultOrphanGrace: a Temporal side younger than this is never removed as
// an orphan, because its row may belong to a transaction still committing.
const defaultOrphanGrace = 2 * time.Minute

// Reconciled counts what a reconciliation changed.
type Reconciled struct {
	Created int // Temporal sides recreated for rows that lacked one
	Removed int // Temporal sides removed for rows that no longer exist
	Synced  int // rows that took their Temporal schedule's paused state
}

// Reconcile brings Temporal in step with the schedules table: a row whose
// Schedule or window workflow is missing gets it (created as the row says,
// paused or not), a guilds schedule or window workflow whose row is gone is
// removed, and a row takes the paused state of its Schedule (toggled in the
// Temporal CLI). grace (0: two minutes) spares what was created just now.
func (m *Manager) Reconcile(ctx context.Context, db store.DB, grace time.Duration) (Reconciled, error) {
	var out Reconciled
	if m == nil || m.Temporal == nil {
		return out, ErrNoTemporal
	}
	if grace == 0 {
		grace = defaultOrphanGrace
	}
	rows, err := schedules.All(ctx, db)
	if err != nil {
		return out, err
	}
	byID := make(map[string]schedules.Schedule, len(rows))
	for _, s := range rows {
		byID[s.ID] = s
	}
	// Cron rows against the namespace's Schedules.
	iter, err := m.Temporal.ScheduleClient().List(ctx, client.ScheduleListOptions{PageSize: 500})
	if err != nil {
		return out, wrapTemporal("list the Temporal schedules", err)
	}
	seen := map[string]bool{}
	var errs []error
	for iter.HasNext() {
		e, err := iter.Next()
		if err != nil {
			return out, wrapTemporal("list the Temporal schedules", err)
		}
		id, ok := strings.CutPrefix(e.ID, "guilds-schedule-")
		if !ok {
			continue
		}
		seen[id] = true
		s, known := byID[id]
		switch {
		case !known || s.Kind != schedules.KindCron:
			h := m.Temporal.ScheduleClient().GetHandle(ctx, e.ID)
			d, err := h.Describe(ctx)
			if isNotFound(err) {
				continue
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if time.Since(d.Info.CreatedAt) < grace {
				continue
			}
			if err := h.Delete(ctx); err != nil && !isNotFound(err) {
				errs = append(errs, err)
				continue
			}
			out.Removed++
			m.log().Info("removed a Temporal schedule whose row is gone", "schedule", e.ID)
		case e.Paused != s.Paused:
			// Paused or resumed outside guilds (the CLI's toggle), or a row
			// write lost after the Temporal call: Temporal decides when a
			// Schedule fires, so the row takes its state. The list may lag,
			// so the state is read again before it is copied.
			d, err := m.Temporal.ScheduleClient().GetHandle(ctx, e.ID).Describe(ctx)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if d.Schedule.State.Paused == s.Paused {
				continue
			}
			var next *time.Time
			if !d.Schedule.State.Paused && len(d.Info.NextActionTimes) > 0 {
				next = &d.Info.NextActionTimes[0]
			}
			if _, err := schedules.SetPaused(ctx, db, s.ID, d.Schedule.State.Paused, next); err != nil {
				errs = append(errs, err)
				continue
			}
			out.Synced++
			m.log().Info("schedule row took Temporal's paused state", "schedule_id", s.ID, "paused", d.Schedule.State.Paused)
		}
	}
	// Window rows against the running window workflows.
	running, err := m.runningWindows(ctx)
	if err != nil {
		return out, err
	}
	for id, started := range running {
		if s, ok := byID[id]; ok && s.Kind == schedules.KindWindow {
			continue
		}
		if time.Since(started) < grace {
			continue
		}
		if err := m.Temporal.TerminateWorkflow(ctx, WindowWorkflowID(id), "", "schedule row deleted"); err != nil && !isNotFound(err) {
			errs = append(errs, err)
			continue
		}
		out.Removed++
		m.log().Info("ended a window workflow whose row is gone", "schedule_id", id)
	}
	for _, s := range rows {
		missing := (s.Kind == schedules.KindCron && !seen[s.ID]) || (s.Kind == schedules.KindWindow && running[s.ID].IsZero())
		if !missing {
			continue
		}
		// The list is eventually consistent: what exists is left alone.
		created, err := m.ensureExists(ctx, s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if created {
			out.Created++
		}
	}
	return out, errors.Join(errs...)
}

// ensureExists creates the Temporal side of a row unless it exists, and
// reports whether it did.
func (m *Manager) ensureExists(ctx context.Context, s schedules.Schedule) (bool, error) {
	switch s.Kind {
	case schedules.KindCron:
		_, err := m.Temporal.ScheduleClient().GetHandle(ctx, ScheduleID(s.ID)).Describe(ctx)
		if err == nil {
			return false, nil
		}
		if !isNotFound(err) {
			return false, wrapTemporal("describe the Temporal schedule", err)
		}
	case schedules.KindWindow:
		d, err := m.Temporal.DescribeWorkflow(ctx, WindowWorkflowID(s.ID), "")
		if err == nil && d.Status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
			return false, nil
		}
		if err != nil && !isNotFound(err) {
			return false, wrapTemporal("describe the window workflow", err)
		}
	}
	if err := m.ensure(ctx, s); err != nil {
		return false, err
	}
	m.log().Info("recreated the Temporal side of a schedule", "schedule_id", s.ID, "kind", s.Kind)
	return true, nil
}

// runningWindows lists the running window workflows by schedule id, with
// their start times.
func (m *Manager) runningWindows(ctx context.Context) (map[string]time.Time, error) {
	out := map[string]time.Time{}
	var token []byte
	for {
		resp, err := m.Temporal.ListWorkflow(ctx, &workflowservice.ListWorkflowExecutionsRequest{
			Query:         fmt.Sprintf("WorkflowType = '%s' AND ExecutionStatus = 'Running'", WindowName),
			NextPageToken: token,
		})
		if err != nil {
			return nil, wrapTemporal("list the window workflows", err)
		}
		for _, e := range resp.GetExecutions() {
			if id, ok := strings.CutPrefix(e.GetExecution().GetWorkflowId(), "guilds-window-"); ok {
				out[id] = e.GetStartTime().AsTime()
			}
		}
		token = resp.GetNextPageToken()
		if len(token) == 0 {
			return out, nil
		}
	}
}

// ReconcileEvery reconciles now and then every interval until ctx ends,
// logging what it changed and what failed.
func (m *Manager) ReconcileEvery(ctx context.Context, db store.DB, interval time.Duration) {
	for {
		r, err := m.Reconcile(ctx, db, 0)
		switch {
		case err != nil && ctx.Err() == nil:
			m.log().Warn("schedule reconciliation incomplete", "error", err)
		case r != Reconciled{}:
			m.log().Info("schedules reconciled", "created", r.Created, "removed", r.Removed, "synced", r.Synced)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}
