package inputs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// ErrSuspended ends a tools/call whose input_required result now waits for a
// person in the run workflow, not in the call (Holder.Hold). It is no
// failure: the server answered, and the run calls the tool again once the
// person has.
var ErrSuspended = errors.New("inputs: the call waits for a person in the run")

// Holder is an asker that can hold a 2026-07-28 call durably: the input
// requests and the requestState of its input_required result are kept in
// PostgreSQL, the call ends, and the run's next call of the same seq sends
// the answers back (docs/adr/0515).
type Holder interface {
	// Hold records forms (by the server's keys) and state, and suspends the
	// call. It reports false where the call cannot be suspended (no
	// keyring, a Test call, a wait already over, a form that cannot be
	// shown): the call then waits in place, as a handshake-era form does.
	Hold(ctx context.Context, forms map[string]Form, state string) (bool, error)
	// Resume returns what the call's first tools/call adds: the answers and
	// the state, found false when nothing is held. When a request still
	// waits and the run's wait for it is not over, the call is suspended
	// again and ErrSuspended returned.
	Resume(ctx context.Context) (answers map[string]Answer, state string, found bool, err error)
	// Delivered says the server took the answers Resume gave: their content
	// and the held state are dropped.
	Delivered(ctx context.Context) error
}

// held is what Resume read, kept for the retries of one call (a lost
// session is dialled again and the call sent once more).
type held struct {
	ids     []string
	answers map[string]Answer
	state   string
}

func holdAAD(runID string, seq int) []byte {
	return []byte("input_hold_state\x00" + runID + "\x00" + strconv.Itoa(seq))
}

// Hold implements Holder.
func (c *CallAsker) Hold(ctx context.Context, forms map[string]Form, state string) (bool, error) {
	if c.Keyring == nil || !tools.CanSuspend(ctx) || len(forms) == 0 {
		return false, nil
	}
	for _, f := range forms {
		if CheckForm(f) != nil {
			return false, nil // declined in place by the session's handler
		}
	}
	if err := c.Delivered(ctx); err != nil { // a round the server just took
		return false, err
	}
	wait := DefaultHeldWait
	if c.DurableWait != nil {
		w, err := c.DurableWait(ctx)
		if err != nil {
			return false, err
		}
		wait = w
	}
	keys := make([]string, 0, len(forms))
	for k := range forms {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	at := c.At
	at.ExpiresAt = time.Now().Add(wait)
	ids := map[string]string{}
	var first Request
	for i, k := range keys {
		r, err := Ask(ctx, c.DB, at, forms[k])
		if err != nil {
			return false, err
		}
		ids[k] = r.ID
		if i == 0 {
			first = r
		}
	}
	var sealed []byte
	if state != "" {
		var err error
		if sealed, err = c.Keyring.Seal([]byte(state), holdAAD(at.RunID, at.Seq)); err != nil {
			return false, err
		}
	}
	raw, _ := json.Marshal(ids)
	if _, err := c.DB.Exec(ctx, `INSERT INTO input_holds (run_id, seq, requests, state) VALUES ($1, $2, $3, $4)
		ON CONFLICT (run_id, seq) DO UPDATE SET requests = EXCLUDED.requests, state = EXCLUDED.state, created_at = now()`,
		at.RunID, at.Seq, raw, sealed); err != nil {
		return false, store.Map(err)
	}
	if c.Waiting != nil {
		if err := c.Waiting(ctx, first); err != nil {
			return false, err
		}
	}
	return tools.Suspend(ctx, tools.Suspension{Key: first.ID, Until: first.ExpiresAt}), nil
}

// Resume implements Holder. A request past its time, or one the run's
// wait gave up on (tools.WaitOver), is expired and answered "decline".
func (c *CallAsker) Resume(ctx context.Context) (map[string]Answer, string, bool, error) {
	if c.resumed != nil {
		return c.resumed.answers, c.resumed.state, true, nil
	}
	if c.Keyring == nil {
		return nil, "", false, nil
	}
	var raw, sealed []byte
	err := store.Map(c.DB.QueryRow(ctx, `SELECT requests, state FROM input_holds WHERE run_id = $1 AND seq = $2`,
		c.At.RunID, c.At.Seq).Scan(&raw, &sealed))
	if errors.Is(err, store.ErrNotFound) {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, err
	}
	var ids map[string]string
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil, "", false, err
	}
	h := &held{answers: map[string]Answer{}}
	if len(sealed) > 0 {
		pt, err := c.Keyring.Open(sealed, holdAAD(c.At.RunID, c.At.Seq))
		if err != nil {
			return nil, "", false, fmt.Errorf("open the held request state: %w", err)
		}
		h.state = string(pt)
	}
	for key, id := range ids {
		a, err := c.answerOf(ctx, id)
		if err != nil {
			return nil, "", false, err
		}
		h.ids = append(h.ids, id)
		h.answers[key] = a
	}
	if c.Settled != nil {
		for _, id := range h.ids {
			r, err := Get(ctx, c.DB, id, nil)
			if err == nil {
				err = c.Settled(ctx, r)
			}
			if err != nil {
				return nil, "", false, err
			}
		}
	}
	c.resumed = h
	return h.answers, h.state, true, nil
}

// answerOf is the answer to one held request: read, not taken, so that a
// call sent again after a lost session still carries it. A request still
// pending suspends the call again while the run's wait lasts.
func (c *CallAsker) answerOf(ctx context.Context, id string) (Answer, error) {
	r, err := Get(ctx, c.DB, id, nil)
	if err != nil {
		return Answer{}, err
	}
	if r.State == StatePending && time.Now().Before(r.ExpiresAt) && tools.CanSuspend(ctx) {
		tools.Suspend(ctx, tools.Suspension{Key: r.ID, Until: r.ExpiresAt})
		return Answer{}, ErrSuspended
	}
	if r.State == StatePending {
		if r, err = Expire(ctx, c.DB, id); err != nil {
			return Answer{}, err
		}
	}
	switch r.State {
	case StateAccepted:
		var content []byte
		if err := c.DB.QueryRow(ctx, `SELECT content FROM input_requests WHERE id = $1`, id).Scan(&content); err != nil {
			return Answer{}, store.Map(err)
		}
		a := Answer{Action: ActionAccept}
		if len(content) > 0 {
			if err := json.Unmarshal(content, &a.Content); err != nil {
				return Answer{}, err
			}
		}
		return a, nil
	case StateCancelled:
		return Answer{Action: ActionCancel}, nil
	}
	return Answer{Action: ActionDecline}, nil
}

// Delivered implements Holder.
func (c *CallAsker) Delivered(ctx context.Context) error {
	if c.resumed == nil {
		return nil
	}
	for _, id := range c.resumed.ids {
		if _, err := Take(ctx, c.DB, id); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	c.resumed = nil
	_, err := c.DB.Exec(ctx, `DELETE FROM input_holds WHERE run_id = $1 AND seq = $2`, c.At.RunID, c.At.Seq)
	return store.Map(err)
}

// DefaultHeldWait is how long a held call waits when the caller set no
// DurableWait.
const DefaultHeldWait = 10 * time.Minute

var _ Holder = (*CallAsker)(nil)
