package inputs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// AnswersChannel is the notification channel an answer is announced on; the
// payload is the request's id.
const AnswersChannel = "guilds_input_answers"

// State is where a request stands.
type State string

const (
	StatePending   State = "pending"
	StateAccepted  State = "accepted"
	StateDeclined  State = "declined"
	StateCancelled State = "cancelled"
	StateExpired   State = "expired" // nobody answered in time: the server is told "decline"
)

// Request is one row of input_requests.
type Request struct {
	ID             string          `json:"id"`
	RunID          string          `json:"run_id"`
	Seq            int             `json:"seq"`
	OrganisationID string          `json:"organisation_id"`
	GuildID        string          `json:"guild_id"`
	AgentID        string          `json:"agent_id"`
	Tool           string          `json:"tool"`   // the name the model called
	Server         string          `json:"server"` // the catalog slug of the server that asks
	Mode           string          `json:"mode"`
	Message        string          `json:"message"`
	Schema         json.RawMessage `json:"requested_schema"`
	URL            string          `json:"url,omitempty"`
	State          State           `json:"state"`
	AnsweredByName string          `json:"answered_by,omitempty"`
	ExpiresAt      time.Time       `json:"expires_at"`
	CreatedAt      time.Time       `json:"created_at"`
	AnsweredAt     *time.Time      `json:"answered_at,omitempty"`
	DeliveredAt    *time.Time      `json:"delivered_at,omitempty"`
}

// Form is the request's form, as the server sent it.
func (r Request) Form() Form {
	return Form{Mode: r.Mode, Message: r.Message, Schema: r.Schema, URL: r.URL}
}

// Reply is an operator's answer.
type Reply struct {
	Answer
	UserID   string
	UserName string
}

// Errors of an answer.
var (
	ErrAnswered  = errors.New("the request was already answered")
	ErrBadFilter = errors.New("inputs: bad filter")
)

const columns = `id, run_id, seq, organisation_id, guild_id, agent_id, tool, server, mode, message,
	requested_schema, url, state, answered_by_name, expires_at, created_at, answered_at, delivered_at`

func scan(row interface{ Scan(...any) error }) (Request, error) {
	var r Request
	err := row.Scan(&r.ID, &r.RunID, &r.Seq, &r.OrganisationID, &r.GuildID, &r.AgentID, &r.Tool, &r.Server,
		&r.Mode, &r.Message, &r.Schema, &r.URL, &r.State, &r.AnsweredByName, &r.ExpiresAt, &r.CreatedAt,
		&r.AnsweredAt, &r.DeliveredAt)
	return r, store.Map(err)
}

// digest identifies a form within its call: the same form asked again by a
// retried call is the same request.
func digest(f Form) string {
	b, _ := json.Marshal(f)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Ask records a request, or returns the one still pending for the same call
// and form (a retried activity asks once). r carries the place, f the form.
func Ask(ctx context.Context, db store.DB, r Request, f Form) (Request, error) {
	if err := CheckForm(f); err != nil {
		return Request{}, err
	}
	schema := f.Schema
	if len(schema) == 0 {
		schema = json.RawMessage(`{}`)
	}
	return scan(db.QueryRow(ctx, `INSERT INTO input_requests
		(run_id, seq, organisation_id, guild_id, agent_id, tool, server, mode, message, requested_schema, url,
		 form_digest, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		ON CONFLICT (run_id, seq, form_digest) WHERE state = 'pending'
		DO UPDATE SET expires_at = greatest(input_requests.expires_at, EXCLUDED.expires_at)
		RETURNING `+columns,
		r.RunID, r.Seq, r.OrganisationID, r.GuildID, r.AgentID, r.Tool, r.Server, f.Mode, f.Message, schema, f.URL,
		digest(f), r.ExpiresAt))
}

// Get reads one request of one of orgs (nil: any, for the platform's own
// use); another organisation's request is store.ErrNotFound.
func Get(ctx context.Context, db store.DB, id string, orgs []string) (Request, error) {
	return scan(db.QueryRow(ctx, `SELECT `+columns+` FROM input_requests
		WHERE id = $1 AND ($2::uuid[] IS NULL OR organisation_id = ANY($2))`, id, orgs))
}

// Respond records an operator's answer to a pending request of one of orgs,
// checked against the request's form, and announces it on AnswersChannel
// when the caller's transaction commits. A request past its expiry is
// expired here, and the answer refused.
func Respond(ctx context.Context, db store.DB, id string, orgs []string, rep Reply) (Request, error) {
	cur, err := scan(db.QueryRow(ctx, `SELECT `+columns+` FROM input_requests
		WHERE id = $1 AND ($2::uuid[] IS NULL OR organisation_id = ANY($2)) FOR UPDATE`, id, orgs))
	if err != nil {
		return Request{}, err
	}
	if cur.State == StatePending && !time.Now().Before(cur.ExpiresAt) {
		if cur, err = Expire(ctx, db, id); err != nil {
			return Request{}, err
		}
	}
	if cur.State != StatePending {
		return cur, fmt.Errorf("%w: it is %s", ErrAnswered, cur.State)
	}
	if err := Check(cur.Form(), rep.Answer); err != nil {
		return cur, err
	}
	var content any
	if rep.Action == ActionAccept && cur.Mode == ModeForm {
		b, err := json.Marshal(rep.Content)
		if err != nil {
			return cur, fmt.Errorf("%w: %v", ErrInvalidAnswer, err)
		}
		content = b
	}
	var by any
	if rep.UserID != "" {
		by = rep.UserID
	}
	state := map[string]State{ActionAccept: StateAccepted, ActionDecline: StateDeclined, ActionCancel: StateCancelled}[rep.Action]
	out, err := scan(db.QueryRow(ctx, `UPDATE input_requests
		SET state = $2, content = $3, answered_by = $4, answered_by_name = $5, answered_at = now()
		WHERE id = $1 RETURNING `+columns, id, state, content, by, rep.UserName))
	if err != nil {
		return Request{}, err
	}
	if _, err := db.Exec(ctx, `SELECT pg_notify($1, $2)`, AnswersChannel, id); err != nil {
		return Request{}, store.Map(err)
	}
	return out, nil
}

// Expire ends a request still pending and returns it as it stands.
func Expire(ctx context.Context, db store.DB, id string) (Request, error) {
	if _, err := db.Exec(ctx, `UPDATE input_requests SET state = 'expired', answered_at = now()
		WHERE id = $1 AND state = 'pending'`, id); err != nil {
		return Request{}, store.Map(err)
	}
	return Get(ctx, db, id, nil)
}

// Take hands an answered request's content to the call that waits for it,
// once: the content is removed from the row as it is read.
func Take(ctx context.Context, db store.DB, id string) (map[string]any, error) {
	var raw []byte
	err := db.QueryRow(ctx, `WITH old AS (SELECT id, content FROM input_requests WHERE id = $1 AND state <> 'pending' FOR UPDATE)
		UPDATE input_requests i SET content = NULL, delivered_at = coalesce(i.delivered_at, now())
		FROM old WHERE i.id = old.id RETURNING old.content`, id).Scan(&raw)
	if err != nil {
		return nil, store.Map(err)
	}
	if len(raw) == 0 {
		return nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// Filter selects requests for a listing.
type Filter struct {
	Orgs  []string // nil: every organisation
	RunID string
	State State // "": every state
	Limit int   // 100 when zero, at most 500
}

// List returns requests, oldest first for the pending inbox, newest first
// otherwise. A pending request past its expiry is listed as expired.
func List(ctx context.Context, db store.DB, f Filter) ([]Request, error) {
	if f.Limit <= 0 || f.Limit > 500 {
		f.Limit = 100
	}
	switch f.State {
	case "", StatePending, StateAccepted, StateDeclined, StateCancelled, StateExpired:
	default:
		return nil, fmt.Errorf("%w: state is one of pending, accepted, declined, cancelled, expired", ErrBadFilter)
	}
	order := "created_at DESC"
	if f.State == StatePending {
		order = "created_at"
	}
	rows, err := db.Query(ctx, `SELECT `+columns+` FROM input_requests
		WHERE ($1::uuid[] IS NULL OR organisation_id = ANY($1))
		  AND ($2 = '' OR run_id::text = $2)
		  AND ($3 = '' OR (CASE WHEN state = 'pending' AND expires_at <= now() THEN 'expired' ELSE state END) = $3)
		ORDER BY `+order+` LIMIT $4`, f.Orgs, f.RunID, string(f.State), f.Limit)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Request{}
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, err
		}
		if r.State == StatePending && !time.Now().Before(r.ExpiresAt) {
			r.State = StateExpired
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// PendingForRun counts a run's requests still waiting for an answer.
func PendingForRun(ctx context.Context, db store.DB, runID string) (int, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT count(*) FROM input_requests WHERE run_id = $1 AND state = 'pending'`, runID).Scan(&n)
	return n, store.Map(err)
}

// CloseRun expires what a run that ended still waits for, and drops any
// answer no call took and any call still held (input_holds).
func CloseRun(ctx context.Context, db store.DB, runID string) error {
	if _, err := db.Exec(ctx, `DELETE FROM input_holds WHERE run_id = $1`, runID); err != nil {
		return store.Map(err)
	}
	_, err := db.Exec(ctx, `UPDATE input_requests
		SET state = CASE WHEN state = 'pending' THEN 'expired' ELSE state END,
		    answered_at = coalesce(answered_at, now()), content = NULL
		WHERE run_id = $1 AND (state = 'pending' OR content IS NOT NULL)`, runID)
	return store.Map(err)
}
