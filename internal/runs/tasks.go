package runs

import (
	"context"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// FollowedTask is a call of a run whose server runs it as a task, which the
// run workflow follows (docs/adr/0625). It holds no secret: the task id was
// checked against the run's redaction set before it reached here.
type FollowedTask struct {
	Seq       int        `json:"seq"`
	Tool      string     `json:"tool"`
	TaskID    string     `json:"task_id"`
	Status    string     `json:"status"` // as the server said at the last poll
	StartedAt time.Time  `json:"started_at"`
	PolledAt  *time.Time `json:"polled_at,omitempty"`
}

// FollowTask records that the call at (run, seq) became a task and marks
// the run waiting for it. A retried hand-over keeps the first row.
func FollowTask(ctx context.Context, db store.DB, runID string, seq int, tool, taskID string) error {
	if _, err := db.Exec(ctx, `INSERT INTO run_tasks (run_id, seq, tool_name, task_id) VALUES ($1, $2, $3, $4)
		ON CONFLICT (run_id, seq) DO NOTHING`, runID, seq, tool, taskID); err != nil {
		return store.Map(err)
	}
	return MarkWaiting(ctx, db, runID)
}

// NoteTaskStatus keeps what the server said of the call's task at a poll.
func NoteTaskStatus(ctx context.Context, db store.DB, runID string, seq int, status string) error {
	_, err := db.Exec(ctx, `UPDATE run_tasks SET status = $3, polled_at = now() WHERE run_id = $1 AND seq = $2`,
		runID, seq, status)
	return store.Map(err)
}

// FollowedTasks lists the run's tasks still followed: those whose call has
// no stored result yet.
func FollowedTasks(ctx context.Context, db store.DB, runID string) ([]FollowedTask, error) {
	rows, err := db.Query(ctx, `SELECT t.seq, t.tool_name, t.task_id, t.status, t.started_at, t.polled_at FROM run_tasks t
		WHERE t.run_id = $1 AND NOT EXISTS (SELECT 1 FROM tool_calls c WHERE c.run_id = t.run_id AND c.seq = t.seq)
		ORDER BY t.seq`, runID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []FollowedTask{}
	for rows.Next() {
		var t FollowedTask
		if err := rows.Scan(&t.Seq, &t.Tool, &t.TaskID, &t.Status, &t.StartedAt, &t.PolledAt); err != nil {
			return nil, store.Map(err)
		}
		out = append(out, t)
	}
	return out, store.Map(rows.Err())
}
