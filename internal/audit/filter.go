package audit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/store"
)

// Filter selects events. The operator app's view and the export take this
// one type, parsed by one function (ParseFilter), so what an operator sees
// is what they download.
type Filter struct {
	// Orgs restricts the events to these organisations; nil means every
	// organisation and the platform's own events (the instance admin). It
	// is set from who asks, never from the query.
	Orgs []string `json:"-"`

	OrganisationID string    `json:"organisation_id,omitempty"`
	GuildID        string    `json:"guild_id,omitempty"`
	AgentID        string    `json:"agent_id,omitempty"`
	RunID          string    `json:"run_id,omitempty"`
	Tool           string    `json:"tool,omitempty"`
	ConnectionID   string    `json:"connection_id,omitempty"` // the login
	Action         string    `json:"action,omitempty"`
	Outcome        string    `json:"outcome,omitempty"`
	From           time.Time `json:"from,omitzero"`
	To             time.Time `json:"to,omitzero"`
	// Before pages back: events with a smaller id (the last id of the
	// previous page).
	Before int64 `json:"before,omitempty"`
	Limit  int   `json:"limit,omitempty"` // 100 by default, at most 1000
}

// ErrBadFilter is a query an operator must correct.
var ErrBadFilter = errors.New("bad audit filter")

// ParseFilter reads a filter from a query string.
func ParseFilter(q url.Values) (Filter, error) {
	f := Filter{OrganisationID: q.Get("organisation_id"), GuildID: q.Get("guild_id"), AgentID: q.Get("agent_id"),
		RunID: q.Get("run_id"), Tool: q.Get("tool"), ConnectionID: q.Get("connection_id"),
		Action: q.Get("action"), Outcome: q.Get("outcome")}
	for name, v := range map[string]string{"organisation_id": f.OrganisationID, "guild_id": f.GuildID,
		"agent_id": f.AgentID, "run_id": f.RunID, "connection_id": f.ConnectionID} {
		if v != "" && uuid.Validate(v) != nil {
			return Filter{}, fmt.Errorf("%w: %s is not an id", ErrBadFilter, name)
		}
	}
	for name, dst := range map[string]*time.Time{"from": &f.From, "to": &f.To} {
		if v := q.Get(name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return Filter{}, fmt.Errorf("%w: %s is a time such as 2026-12-03T10:00:00Z", ErrBadFilter, name)
			}
			*dst = t
		}
	}
	for name, dst := range map[string]*int64{"before": &f.Before} {
		if v := q.Get(name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n <= 0 {
				return Filter{}, fmt.Errorf("%w: %s is the id of an event", ErrBadFilter, name)
			}
			*dst = n
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return Filter{}, fmt.Errorf("%w: limit is 1 to 1000", ErrBadFilter)
		}
		f.Limit = n
	}
	return f, nil
}

// List returns one page of events, newest first.
func List(ctx context.Context, db store.DB, f Filter) ([]Event, error) {
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 100
	}
	rows, err := db.Query(ctx, `SELECT id, at, coalesce(organisation_id::text, ''), coalesce(guild_id::text, ''),
		coalesce(agent_id::text, ''), coalesce(run_id::text, ''), coalesce(seq, 0), trigger, action, tool, kind,
		coalesce(connection_id::text, ''), login_scope, account_hint, args_digest, outcome, duration_ms, result_bytes,
		coalesce(approval_id::text, ''), actor
		FROM audit_events
		WHERE ($1::uuid[] IS NULL OR organisation_id = ANY($1))
		  AND ($2::uuid IS NULL OR organisation_id = $2) AND ($3::uuid IS NULL OR guild_id = $3)
		  AND ($4::uuid IS NULL OR agent_id = $4) AND ($5::uuid IS NULL OR run_id = $5)
		  AND ($6 = '' OR tool = $6) AND ($7::uuid IS NULL OR connection_id = $7)
		  AND ($8 = '' OR action = $8) AND ($9 = '' OR outcome = $9)
		  AND ($10::timestamptz IS NULL OR at >= $10) AND ($11::timestamptz IS NULL OR at < $11)
		  AND ($12::bigint IS NULL OR id < $12)
		ORDER BY id DESC LIMIT $13`,
		f.Orgs, null(f.OrganisationID), null(f.GuildID), null(f.AgentID), null(f.RunID), f.Tool, null(f.ConnectionID),
		f.Action, f.Outcome, nullTime(f.From), nullTime(f.To), nullID(f.Before), f.Limit)
	if err != nil {
		return nil, store.Map(err)
	}
	return scanEvents(rows)
}

// Since returns up to limit events with an id above after, oldest first:
// the order a forwarder reads the trail in.
func Since(ctx context.Context, db store.DB, after int64, limit int) ([]Event, error) {
	rows, err := db.Query(ctx, `SELECT `+eventColumns+` FROM audit_events WHERE id > $1 ORDER BY id LIMIT $2`, after, limit)
	if err != nil {
		return nil, store.Map(err)
	}
	return scanEvents(rows)
}

const eventColumns = `id, at, coalesce(organisation_id::text, ''), coalesce(guild_id::text, ''),
		coalesce(agent_id::text, ''), coalesce(run_id::text, ''), coalesce(seq, 0), trigger, action, tool, kind,
		coalesce(connection_id::text, ''), login_scope, account_hint, args_digest, outcome, duration_ms, result_bytes,
		coalesce(approval_id::text, ''), actor`

func scanEvents(rows pgx.Rows) ([]Event, error) {
	defer rows.Close()
	out := []Event{}
	for rows.Next() {
		var e Event
		if err := rows.Scan(&e.ID, &e.At, &e.OrganisationID, &e.GuildID, &e.AgentID, &e.RunID, &e.Seq, &e.Trigger,
			&e.Action, &e.Tool, &e.Kind, &e.ConnectionID, &e.LoginScope, &e.AccountHint, &e.ArgsDigest, &e.Outcome,
			&e.DurationMS, &e.ResultBytes, &e.ApprovalID, &e.Actor); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Export writes every event the filter selects as JSON lines, newest first,
// a page at a time; f.Limit is the page size, not a bound.
func Export(ctx context.Context, db store.DB, f Filter, w io.Writer) (int, error) {
	enc := json.NewEncoder(w)
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 1000
	}
	n := 0
	for {
		page, err := List(ctx, db, f)
		if err != nil {
			return n, err
		}
		for _, e := range page {
			if err := enc.Encode(e); err != nil {
				return n, err
			}
			n++
		}
		if len(page) < f.Limit {
			return n, nil
		}
		f.Before = page[len(page)-1].ID
	}
}

func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t
}

func nullID(n int64) any {
	if n == 0 {
		return nil
	}
	return n
}
