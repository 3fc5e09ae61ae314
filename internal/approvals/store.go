package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/store"
)

// State is where a request stands.
type State string

const (
	StatePending  State = "pending"
	StateApproved State = "approved"
	StateDenied   State = "denied"
	StateExpired  State = "expired"
	StateUsed     State = "used" // approved, and its call has started
)

// Request is one row of approval_requests, the table this package owns.
type Request struct {
	ID             string          `json:"id"`
	OrganisationID string          `json:"organisation_id"`
	GuildID        string          `json:"guild_id"`
	Binding                        // what the approval is for
	Arguments      json.RawMessage `json:"arguments"` // redacted before Ask
	AskedBecause   string          `json:"asked_because"`
	State          State           `json:"state"`
	StopAsking     bool            `json:"stop_asking"`
	DecidedByName  string          `json:"decided_by,omitempty"`
	Reason         string          `json:"reason,omitempty"`
	CreatedAt      time.Time       `json:"created_at"`
	DecidedAt      *time.Time      `json:"decided_at,omitempty"`
	UsedAt         *time.Time      `json:"used_at,omitempty"`
}

// Decision is an operator's answer.
type Decision struct {
	Approve    bool
	UserID     string
	UserName   string
	Reason     string
	StopAsking bool // approve, and let this tool run unasked for the rest of the run
}

// Errors a decision or a use can meet.
var (
	ErrDecided     = errors.New("the request was already decided")
	ErrNotApproved = errors.New("the request is not approved")
	ErrUsed        = errors.New("the approval has already served its call")
	ErrReasonLong  = errors.New("a reason holds at most 2000 characters")
)

const columns = `id, organisation_id, guild_id, run_id, seq, agent_id, tool, login_id, args_digest,
	arguments, policy_version, asked_because, state, stop_asking, decided_by_name, reason,
	expires_at, created_at, decided_at, used_at`

func scan(row interface{ Scan(...any) error }, more ...any) (Request, error) {
	var r Request
	err := row.Scan(append([]any{&r.ID, &r.OrganisationID, &r.GuildID, &r.RunID, &r.Seq, &r.AgentID, &r.Tool, &r.LoginID,
		&r.ArgsDigest, &r.Arguments, &r.PolicyVersion, &r.AskedBecause, &r.State, &r.StopAsking,
		&r.DecidedByName, &r.Reason, &r.ExpiresAt, &r.CreatedAt, &r.DecidedAt, &r.UsedAt}, more...)...)
	return r, store.Map(err)
}

// Ask records a request, or returns the one already recorded for the same
// call, arguments and policy (a retried activity asks once). A new request
// leaves its "proposed" event in the audit trail; give a transaction so the
// two commit together.
func Ask(ctx context.Context, db store.DB, r Request) (Request, error) {
	if len(r.Arguments) == 0 {
		r.Arguments = json.RawMessage("{}")
	}
	var inserted bool
	row := db.QueryRow(ctx, `INSERT INTO approval_requests
		(organisation_id, guild_id, run_id, seq, agent_id, tool, login_id, args_digest, arguments,
		 policy_version, asked_because, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
		ON CONFLICT (run_id, seq, args_digest, policy_version) DO UPDATE SET run_id = EXCLUDED.run_id
		RETURNING `+columns+`, xmax = 0`,
		r.OrganisationID, r.GuildID, r.RunID, r.Seq, r.AgentID, r.Tool, r.LoginID, r.ArgsDigest,
		r.Arguments, r.PolicyVersion, r.AskedBecause, r.ExpiresAt)
	out, err := scan(row, &inserted)
	if err != nil || !inserted {
		return out, err
	}
	return out, record(ctx, db, out, audit.ApprovalProposed, agentActor(out))
}

// Get reads one request of one of the organisations given (nil: any, for
// the platform's own use); another organisation's request is ErrNotFound.
func Get(ctx context.Context, db store.DB, id string, orgs []string) (Request, error) {
	return scan(db.QueryRow(ctx, `SELECT `+columns+` FROM approval_requests
		WHERE id = $1 AND ($2::uuid[] IS NULL OR organisation_id = ANY($2))`, id, orgs))
}

// Decide answers a pending request of one of orgs. A request past its expiry
// is expired here, and the answer is refused.
func Decide(ctx context.Context, db store.DB, id string, orgs []string, d Decision) (Request, error) {
	if len([]rune(d.Reason)) > 2000 {
		return Request{}, ErrReasonLong
	}
	state, stop := StateDenied, false
	if d.Approve {
		state, stop = StateApproved, d.StopAsking
	}
	var by any
	if d.UserID != "" {
		by = d.UserID
	}
	r, err := scan(db.QueryRow(ctx, `UPDATE approval_requests
		SET state = $3, stop_asking = $4, decided_by = $5, decided_by_name = $6, reason = $7, decided_at = now()
		WHERE id = $1 AND ($2::uuid[] IS NULL OR organisation_id = ANY($2))
		  AND state = 'pending' AND expires_at > now()
		RETURNING `+columns, id, orgs, state, stop, by, d.UserName, d.Reason))
	if err == nil {
		step := audit.ApprovalDenied
		if d.Approve {
			step = audit.ApprovalApproved
		}
		return r, record(ctx, db, r, step, d.actor())
	}
	if !errors.Is(err, store.ErrNotFound) {
		return r, err
	}
	// Nothing changed: say why.
	cur, err := Get(ctx, db, id, orgs)
	if err != nil {
		return Request{}, err
	}
	if cur.State == StatePending {
		if cur, err = Expire(ctx, db, id); err != nil {
			return Request{}, err
		}
	}
	return cur, fmt.Errorf("%w: it is %s", ErrDecided, cur.State)
}

// Expire ends a request that is still pending and returns it as it stands:
// approved or denied if an answer came first. The expiry leaves its event in
// the audit trail, taken by the platform.
func Expire(ctx context.Context, db store.DB, id string) (Request, error) {
	r, err := scan(db.QueryRow(ctx, `UPDATE approval_requests SET state = 'expired', decided_at = now()
		WHERE id = $1 AND state = 'pending' RETURNING `+columns, id))
	switch {
	case err == nil:
		return r, record(ctx, db, r, audit.ApprovalExpired, platformActor)
	case !errors.Is(err, store.ErrNotFound):
		return Request{}, err
	}
	return Get(ctx, db, id, nil)
}

// Use spends an approval on the call described by got: it checks the binding
// and marks the request used, in the caller's transaction so the mark and
// the call's start record commit together. An expired binding is ErrExpired;
// any other mismatch leaves the approval unused, for the workflow to ask again.
func Use(ctx context.Context, tx store.DB, id string, got Binding, now time.Time) (Request, error) {
	r, err := scan(tx.QueryRow(ctx, `SELECT `+columns+` FROM approval_requests WHERE id = $1 FOR UPDATE`, id))
	if err != nil {
		return Request{}, err
	}
	switch r.State {
	case StateApproved:
	case StateUsed:
		return r, ErrUsed
	default:
		return r, fmt.Errorf("%w: it is %s", ErrNotApproved, r.State)
	}
	if err := r.Check(got, now); err != nil {
		return r, err
	}
	if _, err := tx.Exec(ctx, `UPDATE approval_requests SET state = 'used', used_at = $2 WHERE id = $1`, id, now); err != nil {
		return r, store.Map(err)
	}
	r.State, r.UsedAt = StateUsed, &now
	return r, record(ctx, tx, r, audit.ApprovalExecuted, agentActor(r))
}

// Filter selects requests for a listing.
type Filter struct {
	Orgs  []string // nil: every organisation (the platform's own use)
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
	case "", StatePending, StateApproved, StateDenied, StateExpired, StateUsed:
	default:
		return nil, fmt.Errorf("%w: state is one of pending, approved, denied, expired, used", ErrBadFilter)
	}
	order := "created_at DESC"
	if f.State == StatePending {
		order = "created_at"
	}
	rows, err := db.Query(ctx, `SELECT `+columns+` FROM approval_requests
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

// ErrBadFilter is a listing's filter that names no state.
var ErrBadFilter = errors.New("approvals: bad filter")

// Pending lists the requests of orgs waiting for an answer, oldest first.
func Pending(ctx context.Context, db store.DB, orgs []string, limit int) ([]Request, error) {
	return List(ctx, db, Filter{Orgs: orgs, State: StatePending, Limit: limit})
}

// StopsAsking reports whether an operator approved a call of this tool in
// this run with "stop asking": later calls of the tool in the run go unasked.
func StopsAsking(ctx context.Context, db store.DB, runID, tool string) (bool, error) {
	var yes bool
	err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM approval_requests WHERE run_id = $1 AND tool = $2
		AND stop_asking AND state IN ('approved', 'used'))`, runID, tool).Scan(&yes)
	return yes, store.Map(err)
}

// PendingForRun counts a run's requests still waiting for an answer.
func PendingForRun(ctx context.Context, db store.DB, runID string) (int, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT count(*) FROM approval_requests WHERE run_id = $1 AND state = 'pending'`, runID).Scan(&n)
	return n, store.Map(err)
}

// CloseRun expires what a run that ended still waits for, each expiry an
// event of the audit trail.
func CloseRun(ctx context.Context, db store.DB, runID string) error {
	rows, err := db.Query(ctx, `UPDATE approval_requests SET state = 'expired', decided_at = now()
		WHERE run_id = $1 AND state = 'pending' RETURNING `+columns, runID)
	if err != nil {
		return store.Map(err)
	}
	var closed []Request
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			rows.Close()
			return err
		}
		closed = append(closed, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return store.Map(err)
	}
	for _, r := range closed {
		if err := record(ctx, db, r, audit.ApprovalExpired, platformActor); err != nil {
			return err
		}
	}
	return nil
}
