package connectors

import (
	"context"
	"log/slog"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/secret"
)

// RotateStats counts what RotateKeys re-encrypted.
type RotateStats struct {
	Credentials int
	Pending     int
}

// RotateKeys re-encrypts every stored credential and pending login not sealed
// with the keyring's active key, in batches of batchSize rows, each batch one
// short transaction. Rows being refreshed are skipped by the batch and picked
// up by the next one; refreshes write under the active key anyway, so the
// service keeps running throughout. Both old and new keys must be in the
// keyring while it runs. Safe to run again; it stops when no row is left.
func RotateKeys(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring, batchSize int, log *slog.Logger) (RotateStats, error) {
	if batchSize <= 0 {
		batchSize = 100
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var st RotateStats
	active := kr.ActiveKeyID()
	for {
		n, err := rotateBatch(ctx, db, kr, active, batchSize, `
SELECT connection_id, ciphertext FROM connection_credentials WHERE key_id <> $1
ORDER BY connection_id LIMIT $2 FOR UPDATE SKIP LOCKED`,
			`UPDATE connection_credentials SET key_id = $2, ciphertext = $3 WHERE connection_id = $1`,
			func(id uuid.UUID) []byte { return credAAD(id) })
		st.Credentials += n
		if err != nil {
			return st, err
		}
		if n == 0 {
			break
		}
		log.Info("connectors: key rotation batch", "rows", n, "active_key", active)
	}
	for {
		n, err := rotatePendingBatch(ctx, db, kr, active, batchSize)
		st.Pending += n
		if err != nil || n == 0 {
			return st, err
		}
	}
}

func rotateBatch(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring, active string, limit int, sel, upd string, aad func(uuid.UUID) []byte) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sel, active, limit)
		if err != nil {
			return err
		}
		type row struct {
			id uuid.UUID
			ct []byte
		}
		var batch []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.ct); err != nil {
				return err
			}
			batch = append(batch, r)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range batch {
			pt, err := kr.Open(r.ct, aad(r.id))
			if err != nil {
				return err
			}
			ct, err := kr.Seal(pt, aad(r.id))
			clear(pt)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, upd, r.id, active, ct); err != nil {
				return err
			}
		}
		n = len(batch)
		return nil
	})
	return n, err
}

func rotatePendingBatch(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring, active string, limit int) (int, error) {
	n := 0
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT state_hash, verifier FROM connection_oauth_pending WHERE key_id <> $1
LIMIT $2 FOR UPDATE SKIP LOCKED`, active, limit)
		if err != nil {
			return err
		}
		var hs, cts [][]byte
		for rows.Next() {
			var h, ct []byte
			if err := rows.Scan(&h, &ct); err != nil {
				return err
			}
			hs, cts = append(hs, h), append(cts, ct)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for i := range hs {
			pt, err := kr.Open(cts[i], hs[i])
			if err != nil {
				return err
			}
			ct, err := kr.Seal(pt, hs[i])
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE connection_oauth_pending SET key_id = $2, verifier = $3 WHERE state_hash = $1`, hs[i], active, ct); err != nil {
				return err
			}
		}
		n = len(hs)
		return nil
	})
	return n, err
}
