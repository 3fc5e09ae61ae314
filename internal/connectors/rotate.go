package connectors

import (
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/secret"
)

// sealedTable is one table whose rows hold values sealed with the keyring,
// every sealed column of a row under the key its key_id column names.
type sealedTable struct {
	name string
	// pk are the primary key columns as SQL selecting each as text, and
	// match the condition finding a row from those texts ($1, $2…).
	pk    []string
	match string
	// cols are the sealed columns (NULL is skipped); aad binds each value to its row.
	cols []string
	aad  func(pk []string, col string) ([]byte, error)
}

// sealedTables lists every table of sealed values: rotation re-seals them
// all and UnknownKeyIDs checks them all. A new sealed table must be added
// here (TestRotationCoversEverySealedTable finds key_id columns missing from it).
var sealedTables = []sealedTable{
	{
		name: "connection_credentials", pk: []string{"connection_id::text"}, match: "connection_id = $1::uuid",
		cols: []string{"ciphertext"},
		aad: func(pk []string, _ string) ([]byte, error) {
			id, err := uuid.Parse(pk[0])
			return credAAD(id), err
		},
	},
	{
		name: "connection_oauth_pending", pk: []string{"encode(state_hash, 'hex')"}, match: "state_hash = decode($1, 'hex')",
		cols: []string{"verifier", "authorization_url"},
		aad: func(pk []string, col string) ([]byte, error) {
			sh, err := hex.DecodeString(pk[0])
			if col == "authorization_url" {
				return authURLAAD(sh), err
			}
			return sh, err
		},
	},
	{
		name: "organisation_model_keys", pk: []string{"organisation_id::text", "provider"},
		match: "organisation_id = $1::uuid AND provider = $2",
		cols:  []string{"ciphertext"},
		aad: func(pk []string, _ string) ([]byte, error) {
			return models.OrgKeyAAD(pk[0], pk[1]), nil
		},
	},
	{
		name: "agent_secrets", pk: []string{"id::text"}, match: "id = $1::uuid",
		cols: []string{"ciphertext"},
		aad:  func(pk []string, _ string) ([]byte, error) { return agentsecrets.AAD(pk[0]), nil },
	},
	{
		name: "secret_call_arguments", pk: []string{"run_id::text", "seq::text"},
		match: "run_id = $1::uuid AND seq = $2::integer",
		cols:  []string{"ciphertext"},
		aad: func(pk []string, _ string) ([]byte, error) {
			seq, err := strconv.Atoi(pk[1])
			return agentsecrets.CallAAD(pk[0], seq), err
		},
	},
	{
		name: "github_issued_tokens", pk: []string{"id::text", "agent_id::text"}, match: "id = $1::bigint AND agent_id = $2::uuid",
		cols: []string{"ciphertext"},
		aad:  func(pk []string, _ string) ([]byte, error) { return githubapp.TokenAAD(pk[1]), nil },
	},
}

// TableRotation is what RotateKeys did to one table.
type TableRotation struct {
	Table    string
	Resealed int // rows re-sealed under the active key by this run
	Current  int // rows already under the active key before it
	// Remaining counts rows still under another key when the run ended: rows
	// under a key the keyring lacks (Unknown) or rows locked by a refresh
	// throughout. Rotation is complete only when every table has none.
	Remaining int
	Unknown   map[string]int // rows per key id missing from the keyring
}

// RotateStats counts what RotateKeys re-encrypted.
type RotateStats struct {
	Tables []TableRotation
	// Credentials and Pending are the connection_credentials and
	// connection_oauth_pending re-seals, kept for existing callers.
	Credentials int
	Pending     int
}

// Complete reports whether every sealed row is under the active key.
func (s RotateStats) Complete() bool {
	for _, t := range s.Tables {
		if t.Remaining > 0 {
			return false
		}
	}
	return true
}

// RotateKeys re-seals every sealed value of every table in sealedTables not
// under the keyring's active key, in batches of batchSize rows, each batch
// one short transaction. Rows being refreshed are skipped by the batch and
// picked up by the next one; refreshes write under the active key anyway, so
// the service keeps running throughout. Both old and new keys must be in the
// keyring while it runs; rows under a key it lacks are counted, not touched.
// Safe to run again. The error is nil when the work ran: check Complete.
func RotateKeys(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring, batchSize int, log *slog.Logger) (RotateStats, error) {
	if batchSize <= 0 {
		batchSize = 100
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var st RotateStats
	active := kr.ActiveKeyID()
	for _, t := range sealedTables {
		before, err := keyCounts(ctx, db, t.name)
		if err != nil {
			return st, err
		}
		tr := TableRotation{Table: t.name, Current: before[active]}
		for {
			n, err := t.rotateBatch(ctx, db, kr, batchSize)
			tr.Resealed += n
			if err != nil {
				st.Tables = append(st.Tables, tr)
				return st, fmt.Errorf("%s: %w", t.name, err)
			}
			if n == 0 {
				break
			}
			log.Info("connectors: key rotation batch", "table", t.name, "rows", n, "active_key", active)
		}
		after, err := keyCounts(ctx, db, t.name)
		if err != nil {
			return st, err
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
		switch t.name {
		case "connection_credentials":
			st.Credentials = tr.Resealed
		case "connection_oauth_pending":
			st.Pending = tr.Resealed
		}
		st.Tables = append(st.Tables, tr)
	}
	tr, err := rotateCatalog(ctx, db, kr)
	st.Tables = append(st.Tables, tr)
	if err != nil {
		return st, fmt.Errorf("%s: %w", catalogTable, err)
	}
	return st, nil
}

func keyCounts(ctx context.Context, db *pgxpool.Pool, table string) (map[string]int, error) {
	rows, err := db.Query(ctx, `SELECT key_id, count(*) FROM `+table+` GROUP BY key_id`)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", table, err)
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
func (t sealedTable) rotateBatch(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring, limit int) (int, error) {
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
		strings.Join(t.pk, ", "), strings.Join(t.cols, ", "), t.name)
	set := make([]string, len(t.cols))
	for i, c := range t.cols {
		set[i] = fmt.Sprintf("%s = $%d", c, len(t.pk)+2+i)
	}
	upd := fmt.Sprintf(`UPDATE %s SET key_id = $%d, %s WHERE %s`, t.name, len(t.pk)+1, strings.Join(set, ", "), t.match)
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
			r := row{pk: make([]string, len(t.pk)), cts: make([][]byte, len(t.cols))}
			dest := make([]any, 0, len(t.pk)+len(t.cols))
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
			args := make([]any, 0, len(t.pk)+1+len(t.cols))
			for _, p := range r.pk {
				args = append(args, p)
			}
			args = append(args, active)
			for i, c := range t.cols {
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

func (t sealedTable) reseal(kr *secret.Keyring, pk []string, col string, ct []byte) ([]byte, error) {
	if ct == nil {
		return nil, nil
	}
	aad, err := t.aad(pk, col)
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

// KeyUse is how many rows of a table are sealed under one key id.
type KeyUse struct {
	Table string
	KeyID string
	Rows  int
}

// UnknownKeyIDs lists the key ids found in the database (every table of
// sealed values) that the keyring lacks: values that cannot be opened until
// the key is put back. Start-up calls it to warn; `guilds keys rotate`
// reports it.
func UnknownKeyIDs(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring) ([]KeyUse, error) {
	var out []KeyUse
	add := func(table string, counts map[string]int) {
		for id, n := range counts {
			if !kr.Has(id) {
				out = append(out, KeyUse{Table: table, KeyID: id, Rows: n})
			}
		}
	}
	for _, t := range sealedTables {
		counts, err := keyCounts(ctx, db, t.name)
		if err != nil {
			return nil, err
		}
		add(t.name, counts)
	}
	counts, err := catalogKeyIDs(ctx, db)
	if err != nil {
		return nil, err
	}
	add(catalogTable, counts)
	return out, nil
}
