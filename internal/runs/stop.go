package runs

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/store"
)

// Stop ends a run the platform stops before the model is done: the closing
// message (an assistant message written by the platform, at seq) and the
// completed status with its reason commit together. Both are idempotent: a
// message already at seq stays, and a run already final keeps its ending.
func Stop(ctx context.Context, db interface {
	Begin(context.Context) (pgx.Tx, error)
}, id string, seq int, message, reason string) error {
	return pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		if _, err := AppendMessage(ctx, tx, Message{RunID: id, Seq: seq, Role: RoleAssistant, Content: message}); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE runs SET status = 'completed', stop_reason = $2, finished_at = now(), updated_at = now()
			WHERE id = $1 AND status IN ('queued', 'running', 'waiting')`, id, reason)
		return store.Map(err)
	})
}
