package agentsecrets

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Request statuses.
const (
	RequestPending  = "pending"
	RequestProvided = "provided"
	RequestDeclined = "declined"
)

// MaxReasonLen bounds a request's reason.
const MaxReasonLen = 1000

// ErrAnswered refuses a second answer to a request.
var ErrAnswered = errors.New("this secret request was already answered")

// ErrNotAsked refuses an answer from anyone but the user the request asks
// (who started its run) or an instance admin.
var ErrNotAsked = errors.New("only the user who started the run that asked, or an instance admin, may answer this secret request")

// Request is an agent's ask for a secret; it never holds the value.
type Request struct {
	ID         string     `json:"id"`
	RunID      string     `json:"run_id"`
	Seq        int        `json:"seq"`
	AgentID    string     `json:"agent_id"`
	OrgID      string     `json:"organisation_id"`
	Name       string     `json:"name"`
	Reason     string     `json:"reason"`
	Status     string     `json:"status"`
	AskedOf    string     `json:"asked_of"` // the user who started the run; "" when none (then an instance admin answers)
	AnsweredBy string     `json:"answered_by,omitempty"`
	AnsweredAt *time.Time `json:"answered_at,omitempty"`
	CreatedAt  time.Time  `json:"created_at"`
	// WaitUntil is when the run stops waiting for the answer (the request
	// stays open after it); nil for a request opened before it was kept.
	WaitUntil *time.Time `json:"wait_until,omitempty"`
}

// NewRequest is what secret_request asks.
type NewRequest struct {
	RunID, AgentID, OrgID string
	Seq                   int
	Name, Reason          string
	// Wait is how long the run waits for the answer, counted from now
	// (0: no bound is kept, as for a call that waits inside itself).
	Wait time.Duration
}

// OpenRequest records a request for the call at (run, seq), or returns the
// one already recorded there (a retried call asks once).
func OpenRequest(ctx context.Context, db store.DB, in NewRequest) (Request, error) {
	var p validation.Problems
	CheckName(&p, "name", in.Name)
	p.Check(in.Reason != "", "reason", "is required: say what the secret is for")
	p.Check(len(in.Reason) <= MaxReasonLen, "reason", "must be at most %d bytes", MaxReasonLen)
	if err := p.Err(); err != nil {
		return Request{}, err
	}
	if r, err := requestWhere(ctx, db, `run_id = $1 AND seq = $2`, in.RunID, in.Seq); err == nil {
		return r, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return Request{}, err
	}
	// The request asks whoever started its run.
	var wait *int64
	if in.Wait > 0 {
		us := in.Wait.Microseconds()
		wait = &us
	}
	tag, err := db.Exec(ctx, `INSERT INTO secret_requests (run_id, seq, agent_id, organisation_id, name, reason, asked_of, wait_until)
		SELECT $1, $2, $3, $4, $5, $6, started_by, now() + $7::bigint * interval '1 microsecond' FROM runs WHERE id = $1 ON CONFLICT (run_id, seq) DO NOTHING`,
		in.RunID, in.Seq, in.AgentID, in.OrgID, in.Name, in.Reason, wait)
	if err != nil {
		return Request{}, store.Map(err)
	}
	r, err := requestWhere(ctx, db, `run_id = $1 AND seq = $2`, in.RunID, in.Seq)
	if err != nil || tag.RowsAffected() == 0 {
		return r, err
	}
	owner, err := LoadPlace(ctx, db, ScopeAgent, in.AgentID)
	if err != nil {
		return r, err
	}
	return r, recordChange(ctx, db, owner, "", in.Name, "request", "agent:"+in.AgentID, map[string]any{"run_id": in.RunID, "request_id": r.ID})
}

// RequestAt returns the request of the call at (run, seq).
func RequestAt(ctx context.Context, db store.DB, runID string, seq int) (Request, error) {
	return requestWhere(ctx, db, `run_id = $1 AND seq = $2`, runID, seq)
}

// WaitedForInRun counts the run's requests its calls still wait for:
// pending, and their call has no result yet (past its wait the call stores
// one, and the request stays open in the inbox without holding the run).
func WaitedForInRun(ctx context.Context, db store.DB, runID string) (int, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT count(*) FROM secret_requests r WHERE r.run_id = $1 AND r.status = 'pending'
		AND NOT EXISTS (SELECT 1 FROM tool_calls c WHERE c.run_id = r.run_id AND c.seq = r.seq)`, runID).Scan(&n)
	return n, store.Map(err)
}

// RunRequests lists a run's requests in order.
func RunRequests(ctx context.Context, db store.DB, runID string) ([]Request, error) {
	return requestsWhere(ctx, db, `run_id = $1 ORDER BY seq`, runID)
}

// Inbox lists an organisation's requests, newest first; status filters
// (pending, provided, declined) when not empty.
func Inbox(ctx context.Context, db store.DB, orgID, status string) ([]Request, error) {
	switch status {
	case "", RequestPending, RequestProvided, RequestDeclined:
	default:
		return nil, invalid("status", "must be pending, provided or declined")
	}
	return requestsWhere(ctx, db, `organisation_id = $1 AND ($2 = '' OR status = $2) ORDER BY created_at DESC LIMIT 200`, orgID, status)
}

// GetRequest returns a request the principal can see.
func GetRequest(ctx context.Context, db store.DB, p access.Principal, id string) (Request, error) {
	r, err := requestWhere(ctx, db, `id::text = $1`, id)
	if err != nil {
		return r, err
	}
	if !p.CanSeeOrg(r.OrgID) {
		return Request{}, store.ErrNotFound
	}
	return r, nil
}

// Answer is an operator's reply: a value, or a decline.
type Answer struct {
	Value   *string `json:"value"`
	Decline bool    `json:"decline"`
}

// AnswerRequest stores the value as the agent's own secret under the
// requested name (sealed here, never through the workflow) or declines. Only
// the user the request asks or an instance admin answers; a value never
// replaces a secret an operator set (SetOwn).
func AnswerRequest(ctx context.Context, db store.DB, kr *secret.Keyring, p access.Principal, id string, in Answer, actor string) (Request, error) {
	r, err := GetRequest(ctx, db, p, id)
	if err != nil {
		return r, err
	}
	if !p.Admin && (r.AskedOf == "" || r.AskedOf != p.UserID) {
		return r, ErrNotAsked
	}
	var probs validation.Problems
	switch {
	case in.Decline && in.Value != nil:
		probs.Add("value", "give either value or decline, not both")
	case !in.Decline && in.Value == nil:
		probs.Add("value", "is required (or send {\"decline\": true})")
	case in.Value != nil:
		CheckValue(&probs, "value", *in.Value)
	}
	if err := probs.Err(); err != nil {
		return r, err
	}
	// Lock the row: two operators answering at once do not both win.
	var status string
	if err := db.QueryRow(ctx, `SELECT status FROM secret_requests WHERE id = $1 FOR UPDATE`, r.ID).Scan(&status); err != nil {
		return r, store.Map(err)
	}
	if status != RequestPending {
		return r, fmt.Errorf("%w (%s)", ErrAnswered, status)
	}
	owner, err := LoadPlace(ctx, db, ScopeAgent, r.AgentID)
	if err != nil {
		return r, err
	}
	next, action := RequestDeclined, "decline"
	if !in.Decline {
		if _, _, err := SetOwn(ctx, db, kr, owner, r.Name, *in.Value, actor); err != nil {
			return r, err
		}
		next, action = RequestProvided, "provide"
	}
	if _, err := db.Exec(ctx, `UPDATE secret_requests SET status = $2, answered_by = $3, answered_at = now() WHERE id = $1`,
		r.ID, next, actor); err != nil {
		return r, store.Map(err)
	}
	if err := recordChange(ctx, db, owner, "", r.Name, action, actor, map[string]any{"request_id": r.ID, "run_id": r.RunID}); err != nil {
		return r, err
	}
	return requestWhere(ctx, db, `id = $1`, r.ID)
}

const requestColumns = `id::text, run_id::text, seq, agent_id::text, organisation_id::text, name, reason, status, asked_of,
	answered_by, answered_at, created_at, wait_until`

func requestWhere(ctx context.Context, db store.DB, where string, args ...any) (Request, error) {
	list, err := requestsWhere(ctx, db, where, args...)
	if err != nil {
		return Request{}, err
	}
	if len(list) == 0 {
		return Request{}, store.ErrNotFound
	}
	return list[0], nil
}

func requestsWhere(ctx context.Context, db store.DB, where string, args ...any) ([]Request, error) {
	rows, err := db.Query(ctx, `SELECT `+requestColumns+` FROM secret_requests WHERE `+where, args...)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Request{}
	for rows.Next() {
		var r Request
		if err := rows.Scan(&r.ID, &r.RunID, &r.Seq, &r.AgentID, &r.OrgID, &r.Name, &r.Reason, &r.Status, &r.AskedOf,
			&r.AnsweredBy, &r.AnsweredAt, &r.CreatedAt, &r.WaitUntil); err != nil {
			return nil, store.Map(err)
		}
		out = append(out, r)
	}
	return out, store.Map(rows.Err())
}
