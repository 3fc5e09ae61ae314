// Package breaker is the circuit breaker of each login (issue 33, item 5):
// a login whose remote service failed Failures calls in a row is paused for a
// cool-off, during which its calls are refused without being sent; then one
// trial call goes through (half-open), and its success closes the breaker
// while its failure pauses the login again for twice as long, up to a cap.
//
// It only keeps the state (table login_breakers, the one owner); what counts
// as a failure is the caller's to say (Result). The state lives in Postgres
// so that every worker replica and the API read the same one. See
// docs/adr/0626-circuit-breaker-per-login.md.
package breaker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/store"
)

// Settings tune the breaker.
type Settings struct {
	// Failures is how many failures in a row pause a login (New: 0 takes
	// the default, a negative number turns the breaker off).
	Failures int
	// CoolOff is the first pause; each failed trial doubles it.
	CoolOff time.Duration
	// MaxCoolOff caps the doubling.
	MaxCoolOff time.Duration
	// TrialLease is how long a trial call holds the half-open state: a trial
	// whose worker was lost lets another one try after it.
	TrialLease time.Duration
}

// Defaults.
const (
	DefaultFailures   = 5
	DefaultCoolOff    = 60 * time.Second
	DefaultMaxCoolOff = 30 * time.Minute
	// DefaultTrialLease outlives the longest remote call (a catalog row's
	// call timeout is at most 300 s).
	DefaultTrialLease = 6 * time.Minute
)

// Result is how a call through a login went, as the breaker counts it.
type Result int

const (
	// Neutral: nothing was sent, or the call ended for a reason that says
	// nothing about the service (bad input, a login to reconnect, the run's
	// own cancellation). It neither counts nor resets.
	Neutral Result = iota
	// Answered: the service answered, an error result of the tool's own
	// included. It resets the count and closes a paused login.
	Answered
	// Failed: a transport error, a timeout or a 5xx. It counts.
	Failed
)

// Breaker keeps the logins' breakers.
type Breaker struct {
	db  *pgxpool.Pool
	s   Settings
	now func() time.Time
}

// New builds a breaker; now is the clock (nil: time.Now), which tests move
// past a cool-off. Zero settings take the defaults; with s.Failures < 0 the
// breaker is off and New returns nil, which Check and Record accept.
func New(db *pgxpool.Pool, s Settings, now func() time.Time) *Breaker {
	if s.Failures < 0 {
		return nil
	}
	if s.Failures == 0 {
		s.Failures = DefaultFailures
	}
	if s.CoolOff <= 0 {
		s.CoolOff = DefaultCoolOff
	}
	if s.MaxCoolOff < s.CoolOff {
		s.MaxCoolOff = max(DefaultMaxCoolOff, s.CoolOff)
	}
	if s.TrialLease <= 0 {
		s.TrialLease = DefaultTrialLease
	}
	if now == nil {
		now = time.Now
	}
	return &Breaker{db: db, s: s, now: now}
}

// Gate is what Check decided for one call; Record takes it back.
type Gate struct {
	// Allowed: send the call.
	Allowed bool
	// Trial: this call is the one trial after a pause.
	Trial   bool
	trialAt time.Time
	// Failures are the failures in a row Check saw.
	Failures int
	// Until is, for a refused call, when the login is tried again.
	Until time.Time
	// Testing: refused because another call is the trial right now.
	Testing bool
}

// Refusal is the result the model reads for a refused call of server's.
func (g Gate) Refusal(server string) string {
	at := g.Until.UTC().Format(time.RFC3339)
	failures := fmt.Sprintf("%d failures", g.Failures)
	if g.Failures == 1 {
		failures = "1 failure"
	}
	if g.Testing {
		return fmt.Sprintf("%s is paused after %s in a row and one trial call is testing it now; it will be tried again at %s at the latest",
			server, failures, at)
	}
	return fmt.Sprintf("%s is paused after %s in a row; it will be tried again at %s", server, failures, at)
}

// Check says whether a call through the login may go: always while its
// breaker is closed; never while it is paused; once, as the trial, after the
// pause. A nil breaker allows every call.
func (b *Breaker) Check(ctx context.Context, connectionID string) (Gate, error) {
	if b == nil {
		return Gate{Allowed: true}, nil
	}
	now := b.now()
	st, err := b.read(ctx, connectionID)
	switch {
	case err != nil:
		return Gate{Allowed: true}, err
	case st.until == nil:
		return Gate{Allowed: true, Failures: st.failures}, nil
	case now.Before(*st.until):
		return Gate{Failures: st.failures, Until: *st.until}, nil
	}
	// The pause is over: the first to claim the trial sends it.
	var claimed bool
	err = b.db.QueryRow(ctx, `UPDATE login_breakers SET trial_at = $2, updated_at = now()
		WHERE connection_id = $1 AND paused_until <= $2 AND (trial_at IS NULL OR trial_at <= $3)
		RETURNING true`, connectionID, now, now.Add(-b.s.TrialLease)).Scan(&claimed)
	if err == nil {
		return Gate{Allowed: true, Trial: true, trialAt: now, Failures: st.failures}, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return Gate{Allowed: true}, store.Map(err)
	}
	// Another call holds the trial, or it has just closed or paused the login again.
	if st, err = b.read(ctx, connectionID); err != nil || st.until == nil {
		return Gate{Allowed: true, Failures: st.failures}, err
	}
	if now.Before(*st.until) {
		return Gate{Failures: st.failures, Until: *st.until}, nil
	}
	g := Gate{Failures: st.failures, Until: now.Add(b.s.TrialLease), Testing: true}
	if st.trial != nil {
		g.Until = st.trial.Add(b.s.TrialLease)
	}
	return g, nil
}

type row struct {
	failures     int
	until, trial *time.Time
}

// read is the login's row; none reads as closed.
func (b *Breaker) read(ctx context.Context, connectionID string) (row, error) {
	var r row
	err := b.db.QueryRow(ctx, `SELECT failures, paused_until, trial_at FROM login_breakers WHERE connection_id = $1`,
		connectionID).Scan(&r.failures, &r.until, &r.trial)
	if errors.Is(err, pgx.ErrNoRows) {
		return row{}, nil
	}
	return r, store.Map(err)
}

// Record counts how the call Check let through went.
func (b *Breaker) Record(ctx context.Context, connectionID string, g Gate, r Result) error {
	if b == nil || !g.Allowed {
		return nil
	}
	switch r {
	case Answered:
		if g.Failures == 0 && !g.Trial {
			return nil // nothing to reset: no write on the common path
		}
		_, err := b.db.Exec(ctx, `DELETE FROM login_breakers WHERE connection_id = $1`, connectionID)
		return store.Map(err)
	case Failed:
		return b.failed(ctx, connectionID, g)
	default:
		if !g.Trial {
			return nil
		}
		// The trial told nothing: the next call may be the trial.
		_, err := b.db.Exec(ctx, `UPDATE login_breakers SET trial_at = NULL, updated_at = now()
			WHERE connection_id = $1 AND trial_at = $2`, connectionID, g.trialAt)
		return store.Map(err)
	}
}

// failed counts one failure, pausing the login at the threshold, or again
// for twice as long when it was the trial.
func (b *Breaker) failed(ctx context.Context, connectionID string, g Gate) error {
	now := b.now()
	err := pgx.BeginFunc(ctx, b.db, func(tx pgx.Tx) error {
		var (
			failures int
			until    *time.Time
			coolMS   int64
		)
		err := tx.QueryRow(ctx, `INSERT INTO login_breakers (connection_id, failures) VALUES ($1, 0)
			ON CONFLICT (connection_id) DO UPDATE SET failures = login_breakers.failures
			RETURNING failures, paused_until, cool_off_ms`, connectionID).Scan(&failures, &until, &coolMS)
		if err != nil {
			return err
		}
		failures++
		cool := time.Duration(coolMS) * time.Millisecond
		switch {
		case g.Trial && until != nil: // (an operator's Test may have closed it meanwhile)
			cool = min(max(2*cool, b.s.CoolOff), b.s.MaxCoolOff)
			t := now.Add(cool)
			until = &t
		case until == nil && failures >= b.s.Failures:
			cool = b.s.CoolOff
			t := now.Add(cool)
			until = &t
		}
		_, err = tx.Exec(ctx, `UPDATE login_breakers SET failures = $2, paused_until = $3, cool_off_ms = $4,
			trial_at = CASE WHEN $5 THEN NULL ELSE trial_at END, updated_at = now() WHERE connection_id = $1`,
			connectionID, failures, until, cool.Milliseconds(), g.Trial)
		return err
	})
	return store.Map(err)
}

// Reset closes a login's breaker: an operator's own call (the Tools view's
// Test) was answered, so the service is back before the cool-off says so.
func Reset(ctx context.Context, db store.DB, connectionID string) error {
	_, err := db.Exec(ctx, `DELETE FROM login_breakers WHERE connection_id = $1`, connectionID)
	return store.Map(err)
}

// State is a login's breaker as the health view shows it.
type State struct {
	// Failures are the failures in a row since the last answer.
	Failures int `json:"failures_in_a_row"`
	// PausedUntil is set while calls are refused, and after it until the
	// trial call has answered.
	PausedUntil *time.Time `json:"paused_until"`
}

// Get reads a login's breaker; a login without failures has the zero State.
func Get(ctx context.Context, db store.DB, connectionID string) (State, error) {
	var s State
	err := db.QueryRow(ctx, `SELECT failures, paused_until FROM login_breakers WHERE connection_id = $1`,
		connectionID).Scan(&s.Failures, &s.PausedUntil)
	if errors.Is(err, pgx.ErrNoRows) {
		return State{}, nil
	}
	return s, store.Map(err)
}
