package inputs

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/store"
)

// Wait holds until the request is answered or until has passed, and returns
// it as it then stands: answered, or expired. It listens on AnswersChannel on
// a connection of its own (held for the wait) before it reads the row, so an
// answer given in between is not missed. When ctx ends first the request is
// expired and ctx's error returned.
func Wait(ctx context.Context, db *pgxpool.Pool, id string, until time.Time) (Request, error) {
	conn, err := db.Acquire(ctx)
	if err != nil {
		return Request{}, store.Map(err)
	}
	listening := false
	defer func() {
		if listening {
			// The connection goes back to the pool: it must not keep listening.
			if _, err := conn.Exec(context.WithoutCancel(ctx), "UNLISTEN "+AnswersChannel); err != nil {
				_ = conn.Conn().Close(context.WithoutCancel(ctx)) // the pool drops a closed connection
			}
		}
		conn.Release()
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+AnswersChannel); err != nil {
		return Request{}, store.Map(err)
	}
	listening = true
	wctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	for {
		r, err := Get(ctx, conn, id, nil)
		if err != nil || r.State != StatePending {
			return r, err
		}
		for {
			n, err := conn.Conn().WaitForNotification(wctx)
			if err != nil {
				expired, xerr := Expire(context.WithoutCancel(ctx), db, id)
				if ctx.Err() != nil {
					return expired, ctx.Err()
				}
				if errors.Is(err, context.DeadlineExceeded) || xerr != nil {
					return expired, xerr
				}
				return expired, err
			}
			if n.Payload == id {
				break
			}
		}
	}
}
