package schedules

import (
	"context"
	"errors"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// Firing is one wake-up of a schedule: the run it started, or why none.
type Firing struct {
	Key        string    `json:"key"`
	ScheduleID string    `json:"schedule_id"`
	RunID      *string   `json:"run_id"`
	DueAt      time.Time `json:"due_at"`
	Skipped    string    `json:"skipped,omitempty"`
}

// FindFiring returns the firing stored under key, or ErrNotFound.
func FindFiring(ctx context.Context, db store.DB, key string) (Firing, error) {
	var f Firing
	err := db.QueryRow(ctx, `SELECT key, schedule_id, run_id, due_at, skipped FROM schedule_firings WHERE key = $1`, key).
		Scan(&f.Key, &f.ScheduleID, &f.RunID, &f.DueAt, &f.Skipped)
	return f, store.Map(err)
}

// RecordFiring stores a firing. Call it in the transaction that created the
// run: a second attempt under the same key fails with store.ErrConflict and
// rolls its run back, and its retry then finds this one.
func RecordFiring(ctx context.Context, db store.DB, f Firing) error {
	_, err := db.Exec(ctx, `INSERT INTO schedule_firings (key, schedule_id, run_id, due_at, skipped) VALUES ($1, $2, $3, $4, $5)`,
		f.Key, f.ScheduleID, f.RunID, f.DueAt, f.Skipped)
	return store.Map(err)
}

// RecordRun notes the run a firing started and the next wake-up.
func RecordRun(ctx context.Context, db store.DB, id, runID string, at time.Time, next *time.Time) error {
	_, err := db.Exec(ctx, `UPDATE schedules SET last_run_id = $2, last_run_at = $3,
		next_run_at = CASE WHEN paused THEN NULL ELSE $4::timestamptz END, updated_at = now() WHERE id = $1`, id, runID, at, next)
	return store.Map(err)
}

// LastRunLive reports whether the schedule's last run is still queued or
// running, so a wake-up would stack a second run on it.
func LastRunLive(ctx context.Context, db store.DB, id string) (bool, error) {
	var live bool
	err := db.QueryRow(ctx, `SELECT coalesce(r.status IN ('queued', 'running', 'waiting'), false)
		FROM schedules s LEFT JOIN runs r ON r.id = s.last_run_id WHERE s.id = $1`, id).Scan(&live)
	if errors.Is(store.Map(err), store.ErrNotFound) {
		return false, ErrNotFound
	}
	return live, store.Map(err)
}
