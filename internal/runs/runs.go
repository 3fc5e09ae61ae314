// Package runs stores what a run is and what happened in it: the run row,
// the snapshot of what it offers, its messages and its tool calls. The run
// workflow's activities write here; the API reads the transcript back.
//
// Every write made from an activity is keyed by (run, seq), a number the
// workflow assigns, so a retried activity finds its earlier row instead of
// adding a second one.
package runs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
)

// Triggers: what started a run.
const (
	TriggerDirect   = "direct"
	TriggerGroup    = "group"
	TriggerSchedule = "schedule"
)

// Statuses of a run. queued and running are live; the others are final.
const (
	StatusQueued    = "queued"
	StatusRunning   = "running"
	StatusWaiting   = "waiting" // a call waits for a person (docs/adr/0514)
	StatusCompleted = "completed"
	StatusFailed    = "failed"
	StatusCancelled = "cancelled"
)

// Tool-call budget of a run.
const (
	DefaultBudget = 50
	MaxBudget     = 500
)

// ValidTrigger reports whether t names a trigger.
func ValidTrigger(t string) bool {
	return t == TriggerDirect || t == TriggerGroup || t == TriggerSchedule
}

// Final reports whether a status ends a run.
func Final(status string) bool {
	return status == StatusCompleted || status == StatusFailed || status == StatusCancelled
}

// Run is one run of an agent.
type Run struct {
	ID             string `json:"id"`
	AgentID        string `json:"agent_id"`
	GuildID        string `json:"guild_id"`
	OrganisationID string `json:"organisation_id"`
	Trigger        string `json:"trigger"`
	Status         string `json:"status"`
	Model          string `json:"model"`
	Budget         int    `json:"budget"`
	Remaining      int    `json:"remaining_tool_calls"`
	Error          string `json:"error,omitempty"`
	// StopReason says why the platform ended a run the model had not
	// finished (a budget reached); empty when the run ended on its own.
	StopReason string     `json:"stop_reason,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	StartedAt  *time.Time `json:"started_at,omitempty"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	// Exploration is set on coding runs after their first generation.
	Exploration *Exploration `json:"exploration,omitempty"`
}

const runCols = `id, agent_id, guild_id, organisation_id, trigger, status, model, budget, remaining, error, stop_reason,
	created_at, started_at, finished_at, metadata->'exploration'`

func scanRun(row interface{ Scan(...any) error }) (Run, error) {
	var r Run
	var exploration []byte
	err := row.Scan(&r.ID, &r.AgentID, &r.GuildID, &r.OrganisationID, &r.Trigger, &r.Status, &r.Model,
		&r.Budget, &r.Remaining, &r.Error, &r.StopReason, &r.CreatedAt, &r.StartedAt, &r.FinishedAt, &exploration)
	if err == nil && len(exploration) > 0 {
		var e Exploration
		if json.Unmarshal(exploration, &e) == nil {
			r.Exploration = &e
		}
	}
	return r, store.Map(err)
}

// NewRun is what Create needs; the caller has checked the agent is visible.
type NewRun struct {
	AgentID        string
	GuildID        string
	OrganisationID string
	Trigger        string
	Model          string // "provider/model" as resolved at start
	Budget         int
	Message        string // the opening user message, stored at seq 1
	StartedBy      string // the user who started a direct run; "" for schedules and group chat
}

// Create inserts a queued run and its opening message.
func Create(ctx context.Context, db store.DB, in NewRun) (Run, error) {
	row := db.QueryRow(ctx, `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, model, budget, remaining, started_by)
		VALUES ($1, $2, $3, $4, $5, $6, $6, $7) RETURNING `+runCols,
		in.AgentID, in.GuildID, in.OrganisationID, in.Trigger, in.Model, in.Budget, in.StartedBy)
	r, err := scanRun(row)
	if err != nil {
		return Run{}, err
	}
	if _, err := AppendMessage(ctx, db, Message{RunID: r.ID, Seq: 1, Role: RoleUser, Content: in.Message}); err != nil {
		return Run{}, err
	}
	return r, nil
}

// Load returns a run without a visibility check (for activities).
func Load(ctx context.Context, db store.DB, id string) (Run, error) {
	return scanRun(db.QueryRow(ctx, `SELECT `+runCols+` FROM runs WHERE id = $1`, id))
}

// Get returns a run the principal may see; any other is ErrNotFound.
func Get(ctx context.Context, db store.DB, p access.Principal, id string) (Run, error) {
	r, err := Load(ctx, db, id)
	if err != nil {
		return Run{}, err
	}
	if !p.CanSeeOrg(r.OrganisationID) {
		return Run{}, store.ErrNotFound
	}
	return r, nil
}

// ListByAgent lists an agent's runs, newest first (the caller checks visibility).
func ListByAgent(ctx context.Context, db store.DB, agentID string, limit int) ([]Run, error) {
	if limit <= 0 || limit > 200 {
		limit = 50
	}
	rows, err := db.Query(ctx, `SELECT `+runCols+` FROM runs WHERE agent_id = $1
		ORDER BY created_at DESC, id LIMIT $2`, agentID, limit)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, store.Map(rows.Err())
}

// MarkRunning moves a queued run to running; other states are left alone.
func MarkRunning(ctx context.Context, db store.DB, id string) error {
	_, err := db.Exec(ctx, `UPDATE runs SET status = 'running', started_at = coalesce(started_at, now()),
		updated_at = now() WHERE id = $1 AND status = 'queued'`, id)
	return store.Map(err)
}

// Finish records a final status once; a run already final keeps its first ending.
func Finish(ctx context.Context, db store.DB, id, status, errMsg string) error {
	_, err := db.Exec(ctx, `UPDATE runs SET status = $2, error = $3, finished_at = now(), updated_at = now()
		WHERE id = $1 AND status IN ('queued', 'running', 'waiting')`, id, status, errMsg)
	return store.Map(err)
}

// MarkWaiting says a call of the run waits for a person.
func MarkWaiting(ctx context.Context, db store.DB, id string) error {
	_, err := db.Exec(ctx, `UPDATE runs SET status = 'waiting', updated_at = now()
		WHERE id = $1 AND status IN ('running', 'waiting')`, id)
	return store.Map(err)
}

// MarkResumed moves a waiting run back to running.
func MarkResumed(ctx context.Context, db store.DB, id string) error {
	_, err := db.Exec(ctx, `UPDATE runs SET status = 'running', updated_at = now()
		WHERE id = $1 AND status = 'waiting'`, id)
	return store.Map(err)
}

// SetRemaining records the tool calls the run has left. It only ever lowers
// the figure, so a late retry cannot raise it again.
func SetRemaining(ctx context.Context, db store.DB, id string, remaining int) error {
	_, err := db.Exec(ctx, `UPDATE runs SET remaining = least(remaining, greatest($2, 0)), updated_at = now()
		WHERE id = $1`, id, remaining)
	return store.Map(err)
}
