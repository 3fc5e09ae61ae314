package runs

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Filter selects runs for a run list: one scope (an agent, a guild or an
// organisation), optional narrowing, and a keyset cursor.
type Filter struct {
	AgentID        string
	GuildID        string
	OrganisationID string
	Status         string
	Trigger        string
	Since, Until   time.Time // created_at in [Since, Until); zero: open
	Before         string    // the cursor of the last run of the previous page
	Limit          int
}

// Page sizes of a run list.
const (
	DefaultPage = 50
	MaxPage     = 200
)

// Summary is a run as a list shows it.
type Summary struct {
	Run
	FirstMessage string `json:"first_message"`
	Calls        int    `json:"calls"`
	// Errors counts the calls that did not end ok.
	Errors int `json:"errors"`
	// Cursor pages on: ?before=<cursor> lists the runs older than this one.
	Cursor string `json:"cursor"`
}

var listStatuses = []string{StatusQueued, StatusRunning, StatusWaiting, StatusCompleted, StatusFailed, StatusCancelled}

// firstMessageChars bounds the opening message a list shows.
const firstMessageChars = 200

// Check validates the filter's narrowing and fills the page size.
func (f *Filter) Check() error {
	var probs validation.Problems
	probs.Check(f.Status == "" || contains(listStatuses, f.Status), "status", "must be one of %s", strings.Join(listStatuses, ", "))
	probs.Check(f.Trigger == "" || ValidTrigger(f.Trigger), "trigger", "must be direct, group or schedule")
	probs.Check(f.Since.IsZero() || f.Until.IsZero() || f.Since.Before(f.Until), "since", "must be before until")
	if f.Before != "" {
		_, _, err := decodeCursor(f.Before)
		probs.Check(err == nil, "before", "must be the cursor of a run of the previous page")
	}
	probs.Check(f.Limit >= 0 && f.Limit <= MaxPage, "limit", "must be from 1 to %d", MaxPage)
	if f.Limit == 0 {
		f.Limit = DefaultPage
	}
	return probs.Err()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func encodeCursor(at time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(at.UTC().Format(time.RFC3339Nano) + "|" + id))
}

func decodeCursor(c string) (time.Time, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return time.Time{}, "", err
	}
	at, id, ok := strings.Cut(string(raw), "|")
	if !ok || len(id) != 36 {
		return time.Time{}, "", fmt.Errorf("not a run cursor")
	}
	t, err := time.Parse(time.RFC3339Nano, at)
	return t, id, err
}

// List returns one page of runs newest first, each with its opening message
// and call counts. The caller has checked the scope is visible; f is Checked.
func List(ctx context.Context, db store.DB, f Filter) ([]Summary, error) {
	// Only the conditions in use are written, so each shape of filter gets
	// a plan on its scope's (created_at, id) index.
	args := []any{firstMessageChars, f.Limit}
	var where []string
	cond := func(sql string, vals ...any) {
		for _, v := range vals {
			args = append(args, v)
			sql = strings.Replace(sql, "?", fmt.Sprintf("$%d", len(args)), 1)
		}
		where = append(where, sql)
	}
	switch {
	case f.AgentID != "":
		cond("r.agent_id = ?::uuid", f.AgentID)
	case f.GuildID != "":
		cond("r.guild_id = ?::uuid", f.GuildID)
	case f.OrganisationID != "":
		cond("r.organisation_id = ?::uuid", f.OrganisationID)
	default:
		return nil, fmt.Errorf("runs.List: no scope")
	}
	// An agent within a guild or organisation narrows further.
	if f.AgentID != "" && f.GuildID != "" {
		cond("r.guild_id = ?::uuid", f.GuildID)
	}
	if f.AgentID != "" && f.OrganisationID != "" {
		cond("r.organisation_id = ?::uuid", f.OrganisationID)
	}
	if f.Status != "" {
		cond("r.status = ?", f.Status)
	}
	if f.Trigger != "" {
		cond("r.trigger = ?", f.Trigger)
	}
	if !f.Since.IsZero() {
		cond("r.created_at >= ?", f.Since)
	}
	if !f.Until.IsZero() {
		cond("r.created_at < ?", f.Until)
	}
	if f.Before != "" {
		at, id, err := decodeCursor(f.Before)
		if err != nil {
			return nil, store.ErrNotFound
		}
		cond("(r.created_at, r.id) < (?, ?::uuid)", at, id)
	}
	rows, err := db.Query(ctx, `SELECT `+prefixed("r.", runCols)+`,
			coalesce(left(m.content, $1), ''), coalesce(c.calls, 0), coalesce(c.errors, 0)
		FROM runs r
		LEFT JOIN messages m ON m.run_id = r.id AND m.seq = 1
		LEFT JOIN LATERAL (SELECT count(*) AS calls, count(*) FILTER (WHERE outcome <> 'ok') AS errors
			FROM tool_calls t WHERE t.run_id = r.id) c ON true
		WHERE `+strings.Join(where, " AND ")+`
		ORDER BY r.created_at DESC, r.id DESC LIMIT $2`, args...)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Summary{}
	for rows.Next() {
		var s Summary
		var exploration []byte
		r := &s.Run
		if err := rows.Scan(&r.ID, &r.AgentID, &r.GuildID, &r.OrganisationID, &r.Trigger, &r.Status, &r.Model,
			&r.Budget, &r.Remaining, &r.Error, &r.StopReason, &r.CreatedAt, &r.StartedAt, &r.FinishedAt, &exploration,
			&s.FirstMessage, &s.Calls, &s.Errors); err != nil {
			return nil, store.Map(err)
		}
		s.Cursor = encodeCursor(r.CreatedAt, r.ID)
		out = append(out, s)
	}
	return out, store.Map(rows.Err())
}

// prefixed qualifies each column of a column list with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
