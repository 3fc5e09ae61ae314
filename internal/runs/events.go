package runs

import (
	"context"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// Event is one item of a run's event stream: a new message, the run's
// status when it changes, or an event of a Side source.
type Event struct {
	Type    string   `json:"type"` // "message" | "status" | a Side's type
	Message *Message `json:"message,omitempty"`
	Run     *Run     `json:"run,omitempty"`
	Data    any      `json:"data,omitempty"` // a Side event's payload
}

// Side is a source of run events kept outside the messages table (a secret
// request waiting for its operator). Follow calls it whenever it re-reads the
// run and sends what it returns; the source returns each change once.
type Side func(ctx context.Context) ([]Event, error)

// How often a follower re-reads the run: PollInterval without a listening
// Listener, SafetyInterval with one (a notification lost in a reconnect is
// then caught up at the latest after that long).
const (
	PollInterval   = 250 * time.Millisecond
	SafetyInterval = 5 * time.Second
)

// Follow sends the run's messages after seq `after`, then its status
// whenever it changes, until the run is final (after its last messages are
// sent) or ctx ends. It re-reads Postgres when l (may be nil) says the run
// changed, and on a timer as a safety net. send returning an error stops it.
func Follow(ctx context.Context, db store.DB, runID string, after int, l *Listener, send func(Event) error, sides ...Side) error {
	var wake <-chan struct{}
	if l != nil {
		ch, stop := l.Subscribe(runID)
		defer stop()
		wake = ch
	}
	lastStatus := ""
	// Tool results of one turn are written concurrently, so a higher seq can
	// land before a lower one: remember what was sent above the contiguous mark.
	sent := map[int]bool{}
	for {
		r, err := Load(ctx, db, runID)
		if err != nil {
			return err
		}
		msgs, err := Messages(ctx, db, runID, after)
		if err != nil {
			return err
		}
		for i := range msgs {
			if sent[msgs[i].Seq] {
				continue
			}
			if err := send(Event{Type: "message", Message: &msgs[i]}); err != nil {
				return err
			}
			sent[msgs[i].Seq] = true
		}
		for sent[after+1] {
			delete(sent, after+1)
			after++
		}
		for _, side := range sides {
			evs, err := side(ctx)
			if err != nil {
				return err
			}
			for _, ev := range evs {
				if err := send(ev); err != nil {
					return err
				}
			}
		}
		if r.Status != lastStatus {
			lastStatus = r.Status
			if err := send(Event{Type: "status", Run: &r}); err != nil {
				return err
			}
		}
		// The status was read before the messages, so a final status here
		// means every message of the run has been sent.
		if Final(r.Status) {
			return nil
		}
		interval := PollInterval
		if l != nil && l.Listening() {
			interval = SafetyInterval
		}
		timer := time.NewTimer(interval)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-wake:
		case <-timer.C:
		}
		timer.Stop()
	}
}
