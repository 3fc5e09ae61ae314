package schedules

import (
	"context"
	"time"

	"github.com/guilds/guilds/internal/store"
)

const cols = `s.id, s.agent_id, g.id, g.organisation_id, s.kind, s.cron, s.timezone, s.window_start, s.window_end,
	s.max_wakes, s.description, s.instruction, s.paused, s.next_run_at, s.last_run_at, s.last_run_id,
	s.created_by_run, s.created_by_user, s.origin_message_id, s.origin_hop, s.created_at, s.updated_at`

const from = ` FROM schedules s JOIN agents a ON a.id = s.agent_id JOIN guilds g ON g.id = a.guild_id `

func scan(row interface{ Scan(...any) error }) (Schedule, error) {
	var s Schedule
	err := row.Scan(&s.ID, &s.AgentID, &s.GuildID, &s.OrganisationID, &s.Kind, &s.Cron, &s.Timezone, &s.Start, &s.End,
		&s.MaxWakes, &s.Description, &s.Instruction, &s.Paused, &s.NextRunAt, &s.LastRunAt, &s.LastRunID,
		&s.CreatedByRun, &s.CreatedByUser, &s.OriginMessageID, &s.OriginHop, &s.CreatedAt, &s.UpdatedAt)
	s.State = StateActive
	if s.Paused {
		s.State = StatePaused
	}
	return s, store.Map(err)
}

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Insert stores a checked schedule, refusing it with a *LimitError when the
// agent already holds max. The agent's row is locked so that two creations
// at once cannot both pass the count. next is the first wake-up (nil when
// it is not known yet).
func Insert(ctx context.Context, db store.DB, in Checked, max int, next *time.Time) (Schedule, error) {
	var locked string
	if err := db.QueryRow(ctx, `SELECT id FROM agents WHERE id = $1 FOR UPDATE`, in.AgentID).Scan(&locked); err != nil {
		return Schedule{}, store.Map(err)
	}
	var n int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM schedules WHERE agent_id = $1`, in.AgentID).Scan(&n); err != nil {
		return Schedule{}, store.Map(err)
	}
	if max > 0 && n >= max {
		return Schedule{}, &LimitError{Max: max}
	}
	var start, end, tz string
	if in.Kind == KindWindow {
		tz, start, end = in.Timezone, in.Window.Start.String(), in.Window.EndText()
	}
	var id string
	err := db.QueryRow(ctx, `INSERT INTO schedules (agent_id, kind, cron, timezone, window_start, window_end, max_wakes,
		description, instruction, paused, next_run_at, created_by_run, created_by_user, origin_message_id, origin_hop)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15) RETURNING id`,
		in.AgentID, in.Kind, in.New.Cron, tz, start, end, in.MaxWakes, in.Description, in.Instruction, in.Paused,
		next, nullable(in.CreatedByRun), nullable(in.CreatedByUser), nullable(in.OriginMessageID), in.OriginHop).Scan(&id)
	if err != nil {
		return Schedule{}, store.Map(err)
	}
	return Get(ctx, db, id)
}

// Get returns a schedule by id (the caller checks visibility).
func Get(ctx context.Context, db store.DB, id string) (Schedule, error) {
	return scan(db.QueryRow(ctx, `SELECT `+cols+from+`WHERE s.id = $1`, id))
}

// GetOfAgent returns a schedule only when it belongs to the agent.
func GetOfAgent(ctx context.Context, db store.DB, agentID, id string) (Schedule, error) {
	return scan(db.QueryRow(ctx, `SELECT `+cols+from+`WHERE s.id = $1 AND s.agent_id = $2`, id, agentID))
}

// ListByAgent lists an agent's schedules, oldest first.
func ListByAgent(ctx context.Context, db store.DB, agentID string) ([]Schedule, error) {
	return list(ctx, db, `WHERE s.agent_id = $1 ORDER BY s.created_at, s.id`, agentID)
}

// All lists every schedule (reconciliation).
func All(ctx context.Context, db store.DB) ([]Schedule, error) {
	return list(ctx, db, `ORDER BY s.created_at, s.id`)
}

func list(ctx context.Context, db store.DB, where string, args ...any) ([]Schedule, error) {
	rows, err := db.Query(ctx, `SELECT `+cols+from+where, args...)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Schedule{}
	for rows.Next() {
		s, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, store.Map(rows.Err())
}

// SetPaused records the paused flag and the next wake-up (nil while paused).
func SetPaused(ctx context.Context, db store.DB, id string, paused bool, next *time.Time) (Schedule, error) {
	tag, err := db.Exec(ctx, `UPDATE schedules SET paused = $2, next_run_at = $3, updated_at = now() WHERE id = $1`, id, paused, next)
	if err != nil {
		return Schedule{}, store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return Schedule{}, ErrNotFound
	}
	return Get(ctx, db, id)
}

// SetNext records the next wake-up of a schedule.
func SetNext(ctx context.Context, db store.DB, id string, next *time.Time) error {
	_, err := db.Exec(ctx, `UPDATE schedules SET next_run_at = $2, updated_at = now() WHERE id = $1`, id, next)
	return store.Map(err)
}

// Delete removes a schedule row; a missing one is ErrNotFound.
func Delete(ctx context.Context, db store.DB, id string) error {
	tag, err := db.Exec(ctx, `DELETE FROM schedules WHERE id = $1`, id)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	return nil
}

// IDsOfAgent lists the ids and kinds of an agent's schedules (before the
// agent is deleted, to remove them from Temporal).
func IDsOfAgent(ctx context.Context, db store.DB, agentID string) (map[string]Kind, error) {
	rows, err := db.Query(ctx, `SELECT id, kind FROM schedules WHERE agent_id = $1`, agentID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := map[string]Kind{}
	for rows.Next() {
		var id string
		var k Kind
		if err := rows.Scan(&id, &k); err != nil {
			return nil, err
		}
		out[id] = k
	}
	return out, store.Map(rows.Err())
}
