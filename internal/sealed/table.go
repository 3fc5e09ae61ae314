package sealed

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/secret"
)

// Table is a table whose rows hold values sealed with the keyring, every
// sealed column of a row under the key its key_id column names.
type Table struct {
	Table string
	// PK are the primary key columns as SQL selecting each as text, and
	// Match the condition finding a row from those texts ($1, $2…).
	PK    []string
	Match string
	// Cols are the sealed columns (NULL is skipped); AAD binds each value to its row.
	Cols []string
	AAD  func(pk []string, col string) ([]byte, error)
}

// Name is the table's name.
func (t Table) Name() string { return t.Table }

// Rotate re-seals the rows under a known, non-active key, batch rows per
// short transaction. Rows being written by another transaction are skipped
// by the batch and picked up by the next one; writers seal under the active
// key anyway, so the service keeps running throughout.
func (t Table) Rotate(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring, batch int, log *slog.Logger) (Rotation, error) {
	active := kr.ActiveKeyID()
	before, err := t.KeyIDs(ctx, db)
	if err != nil {
		return Rotation{}, err
	}
	tr := Rotation{Table: t.Table, Current: before[active]}
	for {
		n, err := t.rotateBatch(ctx, db, kr, batch)
		tr.Resealed += n
		if err != nil {
			return tr, err
		}
		if n == 0 {
			break
		}
		log.Info("sealed: key rotation batch", "table", t.Table, "rows", n, "active_key", active)
	}
	after, err := t.KeyIDs(ctx, db)
	if err != nil {
		return tr, err
	}
	for id, n := range after {
		if id == active {
			continue
		}
		tr.Remaining += n
		if !kr.Has(id) {
			if tr.Unknown == nil {
				tr.Unknown = map[string]int{}
			}
			tr.Unknown[id] = n
		}
	}
	return tr, nil
}

// KeyIDs counts the table's rows per key id.
func (t Table) KeyIDs(ctx context.Context, db *pgxpool.Pool) (map[string]int, error) {
	rows, err := db.Query(ctx, `SELECT key_id, count(*) FROM `+t.Table+` GROUP BY key_id`)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			rows.Close()
			return nil, err
		}
		out[id] = n
	}
	return out, rows.Err()
}

// rotateBatch re-seals up to limit rows under a known, non-active key.
func (t Table) rotateBatch(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring, limit int) (int, error) {
	active := kr.ActiveKeyID()
	var others []string
	for _, id := range kr.KeyIDs() {
		if id != active {
			others = append(others, id)
		}
	}
	if len(others) == 0 {
		return 0, nil
	}
	sel := fmt.Sprintf(`SELECT %s, %s FROM %s WHERE key_id = ANY($1) LIMIT $2 FOR UPDATE SKIP LOCKED`,
		strings.Join(t.PK, ", "), strings.Join(t.Cols, ", "), t.Table)
	set := make([]string, len(t.Cols))
	for i, c := range t.Cols {
		set[i] = fmt.Sprintf("%s = $%d", c, len(t.PK)+2+i)
	}
	upd := fmt.Sprintf(`UPDATE %s SET key_id = $%d, %s WHERE %s`, t.Table, len(t.PK)+1, strings.Join(set, ", "), t.Match)
	n := 0
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, sel, others, limit)
		if err != nil {
			return err
		}
		type row struct {
			pk  []string
			cts [][]byte
		}
		var batch []row
		for rows.Next() {
			r := row{pk: make([]string, len(t.PK)), cts: make([][]byte, len(t.Cols))}
			dest := make([]any, 0, len(t.PK)+len(t.Cols))
			for i := range r.pk {
				dest = append(dest, &r.pk[i])
			}
			for i := range r.cts {
				dest = append(dest, &r.cts[i])
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return err
			}
			batch = append(batch, r)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range batch {
			args := make([]any, 0, len(t.PK)+1+len(t.Cols))
			for _, p := range r.pk {
				args = append(args, p)
			}
			args = append(args, active)
			for i, c := range t.Cols {
				resealed, err := t.reseal(kr, r.pk, c, r.cts[i])
				if err != nil {
					return err
				}
				args = append(args, resealed)
			}
			if _, err := tx.Exec(ctx, upd, args...); err != nil {
				return err
			}
		}
		n = len(batch)
		return nil
	})
	return n, err
}

func (t Table) reseal(kr *secret.Keyring, pk []string, col string, ct []byte) ([]byte, error) {
	if ct == nil {
		return nil, nil
	}
	aad, err := t.AAD(pk, col)
	if err != nil {
		return nil, err
	}
	pt, err := kr.Open(ct, aad)
	if err != nil {
		return nil, fmt.Errorf("column %s: %w", col, err)
	}
	out, err := kr.Seal(pt, aad)
	clear(pt)
	return out, err
}
