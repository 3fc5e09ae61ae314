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
	var beforeAt *time.Time
	var beforeID *string
	if f.Before != "" {
		at, id, err := decodeCursor(f.Before)
		if err != nil {
			return nil, store.ErrNotFound
		}
		beforeAt, beforeID = &at, &id
	}
	opt := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		return &t
	}
	rows, err := db.Query(ctx, `SELECT `+prefixed("r.", runCols)+`,
			coalesce(left(m.content, $10), ''), coalesce(c.calls, 0), coalesce(c.errors, 0)
		FROM runs r
		LEFT JOIN messages m ON m.run_id = r.id AND m.seq = 1
		LEFT JOIN LATERAL (SELECT count(*) AS calls, count(*) FILTER (WHERE outcome <> 'ok') AS errors
			FROM tool_calls t WHERE t.run_id = r.id) c ON true
		WHERE ($1::uuid IS NULL OR r.agent_id = $1) AND ($2::uuid IS NULL OR r.guild_id = $2)
		  AND ($3::uuid IS NULL OR r.organisation_id = $3)
		  AND ($4 = '' OR r.status = $4) AND ($5 = '' OR r.trigger = $5)
		  AND ($6::timestamptz IS NULL OR r.created_at >= $6) AND ($7::timestamptz IS NULL OR r.created_at < $7)
		  AND ($8::timestamptz IS NULL OR (r.created_at, r.id) < ($8, $9::uuid))
		ORDER BY r.created_at DESC, r.id DESC LIMIT $11`,
		null(f.AgentID), null(f.GuildID), null(f.OrganisationID), f.Status, f.Trigger,
		opt(f.Since), opt(f.Until), beforeAt, beforeID, firstMessageChars, f.Limit)
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

func null(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// prefixed qualifies each column of a column list with a table alias.
func prefixed(alias, cols string) string {
	parts := strings.Split(cols, ",")
	for i, p := range parts {
		parts[i] = alias + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}
