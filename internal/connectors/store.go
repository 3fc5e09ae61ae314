package connectors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
)

// The token store: Postgres (connection_credentials) is the truth; the
// credential is sealed with the keyring and bound to its connection id. Every
// write increments version, which fences concurrent writers.

// storedCredential is the plaintext layout inside the ciphertext.
type storedCredential struct {
	AccessToken  string            `json:"a,omitempty"`
	RefreshToken string            `json:"r,omitempty"`
	TokenType    string            `json:"t,omitempty"`
	Expiry       time.Time         `json:"e,omitzero"`
	Extra        map[string]string `json:"x,omitempty"`
	Client       *OAuthClient      `json:"c,omitempty"`
	DPoPKey      string            `json:"k,omitempty"`
}

func credAAD(id uuid.UUID) []byte {
	return append([]byte("connection_credentials\x00"), id[:]...)
}

func seal(kr *secret.Keyring, id uuid.UUID, c Credential) (keyID string, ct []byte, err error) {
	pt, err := json.Marshal(storedCredential(c)) //nolint:gosec // G117: the plaintext is sealed below and cleared, never stored or sent
	if err != nil {
		return "", nil, err
	}
	ct, err = kr.Seal(pt, credAAD(id))
	clear(pt)
	return kr.ActiveKeyID(), ct, err
}

func unseal(kr *secret.Keyring, id uuid.UUID, ct []byte) (Credential, error) {
	pt, err := kr.Open(ct, credAAD(id))
	if err != nil {
		return Credential{}, err
	}
	var s storedCredential
	err = json.Unmarshal(pt, &s)
	clear(pt)
	if err != nil {
		return Credential{}, fmt.Errorf("connectors: stored credential of %s is not readable", id)
	}
	return Credential(s), nil
}

// record is one connection with its catalog row and stored credential.
type record struct {
	conn      Connection
	serverCfg []byte
	has       bool // a credential row exists
	keyID     string
	ct        []byte
	version   int64
	expiresAt time.Time
}

// credentialSQL reads a login's stored credential row.
const credentialSQL = `
SELECT connection_id, key_id, ciphertext, version, expires_at, state, attempts, next_retry_at,
       last_success_at, last_failure_at, last_error_code
FROM connection_credentials`

// newRecord is a connection as read from connstore, without its credential.
func newRecord(c connstore.Connection) *record {
	r := &record{serverCfg: c.Server.Config}
	r.conn = Connection{ID: c.ID.UUID(), ServerID: c.Server.ID, ServerSlug: c.Server.Slug, ServerName: c.Server.Name,
		Auth: c.Server.Auth, Transport: c.Server.Transport, URL: c.Server.URL, OwnerScope: c.OwnerScope,
		OwnerID: c.OwnerUUID(), Status: c.Status, AccountHint: c.AccountHint,
		Ref: refFromConfig(c.Server.Slug, c.Server.Config)}
	r.conn.Health.State = HealthDisconnected
	return r
}

// scanCredential fills r from a credential row and reports its connection.
func (r *record) scanCredential(row pgx.Row) (uuid.UUID, error) {
	var (
		id                          uuid.UUID
		exp, next, lastOK, lastFail *time.Time
		state                       string
		h                           Health
	)
	err := row.Scan(&id, &r.keyID, &r.ct, &r.version, &exp, &state, &h.Attempts, &next, &lastOK, &lastFail, &h.LastErrorCode)
	if err != nil {
		return id, err
	}
	r.has = true
	h.State = HealthState(state)
	h.NextRetryAt, h.LastSuccessAt, h.LastFailureAt = deref(next), deref(lastOK), deref(lastFail)
	r.conn.Health = h
	r.expiresAt = deref(exp)
	return id, nil
}

func deref(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}

func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func readRecord(ctx context.Context, db store.DB, id uuid.UUID) (*record, error) {
	c, err := connstore.Get(ctx, db, connstore.ID(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrUnknownConnection
	}
	if err != nil {
		return nil, err
	}
	r := newRecord(c)
	_, err = r.scanCredential(db.QueryRow(ctx, credentialSQL+" WHERE connection_id = $1", id))
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, store.Map(err)
	}
	return r, nil
}

func listRecords(ctx context.Context, db store.DB) ([]*record, error) {
	conns, err := connstore.All(ctx, db)
	if err != nil {
		return nil, err
	}
	out := make([]*record, 0, len(conns))
	byID := make(map[uuid.UUID]*record, len(conns))
	for _, c := range conns {
		r := newRecord(c)
		out = append(out, r)
		byID[r.conn.ID] = r
	}
	rows, err := db.Query(ctx, credentialSQL)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	for rows.Next() {
		var cr record
		id, err := cr.scanCredential(rows)
		if err != nil {
			return nil, err
		}
		if r := byID[id]; r != nil {
			r.keyID, r.ct, r.version, r.expiresAt, r.has, r.conn.Health = cr.keyID, cr.ct, cr.version, cr.expiresAt, true, cr.conn.Health
		}
	}
	return out, rows.Err()
}

// refFromConfig reads {"provider": …, "sub_service": …} from a catalog row's
// config; the provider defaults to the slug.
func refFromConfig(slug string, cfg []byte) Ref {
	c, _ := catalog.ParseConfig(cfg) // lenient: a bad config names the slug's provider
	return Ref{Provider: ProviderID(c.ProviderName(slug)), SubService: SubService(c.SubService)}
}

// putCredential stores a new login (connect) and marks the connection connected.
func putCredential(ctx context.Context, db store.DB, kr *secret.Keyring, id uuid.UUID, c Credential, accountHint string) (int64, error) {
	keyID, ct, err := seal(kr, id, c)
	if err != nil {
		return 0, err
	}
	var version int64
	err = db.QueryRow(ctx, `
INSERT INTO connection_credentials (connection_id, key_id, ciphertext, version, expires_at, state, last_success_at)
VALUES ($1, $2, $3, 1, $4, 'healthy', now())
ON CONFLICT (connection_id) DO UPDATE SET
    key_id = EXCLUDED.key_id, ciphertext = EXCLUDED.ciphertext,
    version = connection_credentials.version + 1, expires_at = EXCLUDED.expires_at,
    state = 'healthy', attempts = 0, next_retry_at = NULL, last_success_at = now(),
    last_error_code = '', updated_at = now()
RETURNING version`, id, keyID, ct, nullTime(c.Expiry)).Scan(&version)
	if err != nil {
		return 0, store.Map(err)
	}
	return version, connstore.SetConnectedKeepingHint(ctx, db, connstore.ID(id), accountHint)
}

// errFenced: the row changed since it was read; the caller adopts the new row.
var errFenced = errors.New("connectors: credential changed concurrently")

// saveRefreshed writes a refreshed, already sealed credential if the row is
// still at prevVersion, and returns the new version.
func saveRefreshed(ctx context.Context, db store.DB, id uuid.UUID, prevVersion int64, keyID string, ct []byte, expiry time.Time) (int64, error) {
	var version int64
	err := db.QueryRow(ctx, `
UPDATE connection_credentials SET key_id = $3, ciphertext = $4, version = version + 1, expires_at = $5,
    state = 'healthy', attempts = 0, next_retry_at = NULL, last_success_at = now(), last_error_code = '', updated_at = now()
WHERE connection_id = $1 AND version = $2
RETURNING version`, id, prevVersion, keyID, ct, nullTime(expiry)).Scan(&version)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, errFenced
	}
	return version, err
}

// recordFailure stores a failed refresh if the row is still at prevVersion.
// A permanent failure marks the credential reconnect_required and the
// connection disconnected; a transient one schedules the next retry. The
// credential itself is kept either way.
func recordFailure(ctx context.Context, pool txBeginner, id uuid.UUID, prevVersion int64, permanent bool, code string) (Health, int64, error) {
	var h Health
	var version int64
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		state := HealthRefreshFailing
		if permanent {
			state = HealthReconnectRequired
		}
		var next, lastOK, lastFail *time.Time
		var st string
		err := tx.QueryRow(ctx, `
UPDATE connection_credentials SET
    version = version + 1, state = $3, attempts = attempts + 1,
    next_retry_at = CASE WHEN $3 = 'refresh_failing'
        THEN now() + make_interval(secs => least($5::float8, $6::float8 * power(2, least(attempts, 20))))
        ELSE NULL END,
    last_failure_at = now(), last_error_code = $4, updated_at = now()
WHERE connection_id = $1 AND version = $2
RETURNING version, state, attempts, next_retry_at, last_success_at, last_failure_at`,
			id, prevVersion, string(state), code, backoffMax.Seconds(), backoffBase.Seconds()).
			Scan(&version, &st, &h.Attempts, &next, &lastOK, &lastFail)
		if errors.Is(err, pgx.ErrNoRows) {
			return errFenced
		}
		if err != nil {
			return err
		}
		h.State, h.LastErrorCode = HealthState(st), code
		if err := audit.RecordLogin(ctx, tx, id.String(), audit.ActionRefreshFailed, st, audit.ActorPlatform); err != nil {
			return err
		}
		h.NextRetryAt, h.LastSuccessAt, h.LastFailureAt = deref(next), deref(lastOK), deref(lastFail)
		if permanent {
			err = connstore.SetDisconnected(ctx, tx, connstore.ID(id))
			if errors.Is(err, store.ErrNotFound) {
				err = nil
			}
		}
		return err
	})
	return h, version, err
}

// wipeCredential replaces a login with an empty sealed credential, marks it
// disconnected and the connection too, and returns the new version. The row
// stays so that versions keep increasing across a reconnect.
func wipeCredential(ctx context.Context, pool txBeginner, kr *secret.Keyring, id uuid.UUID) (int64, error) {
	keyID, ct, err := seal(kr, id, Credential{})
	if err != nil {
		return 0, err
	}
	var version int64
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := markDisconnected(ctx, tx, id); err != nil {
			return err
		}
		err := tx.QueryRow(ctx, `
UPDATE connection_credentials SET key_id = $2, ciphertext = $3, version = version + 1, expires_at = NULL,
    state = 'disconnected', attempts = 0, next_retry_at = NULL, last_error_code = 'disconnected', updated_at = now()
WHERE connection_id = $1 RETURNING version`, id, keyID, ct).Scan(&version)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil
		}
		return err
	})
	return version, err
}

// markDisconnected marks a connection disconnected, or answers
// ErrUnknownConnection.
func markDisconnected(ctx context.Context, tx pgx.Tx, id uuid.UUID) error {
	err := connstore.SetDisconnected(ctx, tx, connstore.ID(id))
	if errors.Is(err, store.ErrNotFound) {
		return ErrUnknownConnection
	}
	return err
}

type txBeginner interface {
	Begin(ctx context.Context) (pgx.Tx, error)
}
