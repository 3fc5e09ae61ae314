package inputs

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/secret"
)

// Asker puts a server's form before a person and returns the answer to send
// back. A call that may ask carries one in its context (WithAsker).
type Asker interface {
	Ask(ctx context.Context, f Form, wait time.Duration) (Answer, error)
}

type askerKey struct{}

// WithAsker returns a context in which a server's forms go to a.
func WithAsker(ctx context.Context, a Asker) context.Context {
	return context.WithValue(ctx, askerKey{}, a)
}

// AskerFrom is the context's asker, nil when nobody can be asked (a Test
// call from the API, a listing).
func AskerFrom(ctx context.Context) Asker {
	a, _ := ctx.Value(askerKey{}).(Asker)
	return a
}

// CallAsker asks for one tool call of a run: it records the request at the
// call's place, waits for the answer, and takes it.
type CallAsker struct {
	DB *pgxpool.Pool
	// At is the call's place: run, seq, organisation, guild, agent, tool
	// and server; the rest is filled per form.
	At Request
	// Waiting is told a request now waits (the run reads "waiting"), and
	// Settled once it no longer does; both may be nil.
	Waiting, Settled func(ctx context.Context, r Request) error
	// Keyring seals a held call's requestState; nil: the call cannot be
	// held durably and waits in place (Hold).
	Keyring *secret.Keyring
	// DurableWait is how long a held call waits for its person
	// (DefaultHeldWait when nil).
	DurableWait func(ctx context.Context) (time.Duration, error)

	resumed *held
}

// Ask implements Asker. An expired request is declined.
func (c CallAsker) Ask(ctx context.Context, f Form, wait time.Duration) (Answer, error) {
	at := c.At
	at.ExpiresAt = time.Now().Add(wait)
	r, err := Ask(ctx, c.DB, at, f)
	if err != nil {
		return Answer{}, err
	}
	if c.Waiting != nil {
		if err := c.Waiting(ctx, r); err != nil {
			return Answer{}, err
		}
	}
	r, err = Wait(ctx, c.DB, r.ID, r.ExpiresAt)
	if c.Settled != nil {
		if serr := c.Settled(context.WithoutCancel(ctx), r); serr != nil && err == nil {
			err = serr
		}
	}
	if err != nil {
		return Answer{}, err
	}
	switch r.State {
	case StateAccepted:
		content, err := Take(ctx, c.DB, r.ID)
		if err != nil {
			return Answer{}, err
		}
		return Answer{Action: ActionAccept, Content: content}, nil
	case StateCancelled:
		return Answer{Action: ActionCancel}, nil
	}
	return Answer{Action: ActionDecline}, nil
}
