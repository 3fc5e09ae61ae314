package connectors

import (
	"context"
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/audit"
)

// MarkRejected records that the remote service refused a connection's login
// for good (a fresh token, or a key tried twice): the credential becomes
// reconnect_required with code and the connection disconnected. Every replica
// hears it at once, as after any other write of the engine.
func (e *Engine) MarkRejected(ctx context.Context, id uuid.UUID, code string) error {
	if err := e.active(); err != nil {
		return err
	}
	v, err := markRejected(ctx, e.db, id, code)
	if err != nil {
		return err
	}
	if v > 0 {
		e.changed(ctx, id, v)
	}
	e.log.Warn("connectors: the service rejects the login; it needs reconnecting", "connection", id, "code", code)
	return nil
}

// MarkRejected is Engine.MarkRejected, for holders of the resolver alone
// (the MCP pool).
func (r *Resolver) MarkRejected(ctx context.Context, id uuid.UUID, code string) error {
	return r.eng.MarkRejected(ctx, id, code)
}

// markRejected returns the credential's new version, or 0 when the
// connection holds no credential (only its status changes then).
func markRejected(ctx context.Context, pool txBeginner, id uuid.UUID, code string) (int64, error) {
	var version int64
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := markDisconnected(ctx, tx, id); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `
UPDATE connection_credentials SET state = $2, last_error_code = $3, last_failure_at = now(),
    next_retry_at = NULL, version = version + 1, updated_at = now()
WHERE connection_id = $1 RETURNING version`, id, string(HealthReconnectRequired), code).Scan(&version)
		if errors.Is(err, pgx.ErrNoRows) {
			err = nil
		}
		if err != nil {
			return err
		}
		return audit.RecordLogin(ctx, tx, id.String(), audit.ActionDisconnect, "rejected", audit.ActorPlatform)
	})
	return version, err
}
