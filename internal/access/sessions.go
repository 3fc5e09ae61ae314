package access

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// SessionPrefix starts every session id the operator app's cookie carries.
const SessionPrefix = "gls_"

// SessionLifetime bounds a browser session; the token it was opened with
// bounds it too (its expiry, its revocation, its user being disabled).
const SessionLifetime = 12 * time.Hour

// ErrSessionExpired: the cookie names a session that ended.
var ErrSessionExpired = &AuthError{Code: "session_expired", Message: "your session has ended: sign in again"}

// Session is an open browser session. ID and CSRF are the plain values,
// handed to the browser once; only their hashes are stored.
type Session struct {
	ID        string
	CSRF      string
	UserID    string
	ExpiresAt time.Time
}

// OpenSession exchanges a valid API token for a browser session.
func OpenSession(ctx context.Context, db store.DB, token string) (Session, error) {
	token = strings.TrimSpace(token)
	if _, err := Authenticate(ctx, db, token); err != nil {
		return Session{}, err
	}
	sum := sha256.Sum256([]byte(token))
	var tokenID, userID string
	var tokenExpires *time.Time
	if err := db.QueryRow(ctx, `SELECT id, user_id, expires_at FROM api_tokens WHERE token_hash = $1`, sum[:]).
		Scan(&tokenID, &userID, &tokenExpires); err != nil {
		return Session{}, store.Map(err)
	}
	s := Session{ID: SessionPrefix + randomValue(), CSRF: randomValue(), UserID: userID,
		ExpiresAt: time.Now().Add(SessionLifetime).UTC().Truncate(time.Second)}
	if tokenExpires != nil && tokenExpires.Before(s.ExpiresAt) {
		s.ExpiresAt = *tokenExpires
	}
	idHash, csrfHash := sha256.Sum256([]byte(s.ID)), sha256.Sum256([]byte(s.CSRF))
	_, err := db.Exec(ctx, `INSERT INTO app_sessions (user_id, token_id, session_hash, csrf_hash, expires_at)
		VALUES ($1, $2, $3, $4, $5)`, userID, tokenID, idHash[:], csrfHash[:], s.ExpiresAt)
	return s, store.Map(err)
}

// SessionAuth is the principal behind a session cookie and the hash of the
// CSRF token its mutating requests must repeat.
type SessionAuth struct {
	Principal Principal
	csrfHash  []byte
}

// CSRFMatches reports whether a request's X-CSRF-Token is its session's.
func (a SessionAuth) CSRFMatches(header string) bool {
	if header == "" {
		return false
	}
	sum := sha256.Sum256([]byte(header))
	return subtle.ConstantTimeCompare(sum[:], a.csrfHash) == 1
}

// AuthenticateSession finds the principal of a session cookie's value. A
// session ends with its own expiry, and when its token is revoked or expires
// or its user is disabled.
func AuthenticateSession(ctx context.Context, db store.DB, id string) (SessionAuth, error) {
	if !strings.HasPrefix(id, SessionPrefix) {
		return SessionAuth{}, ErrUnauthenticated
	}
	sum := sha256.Sum256([]byte(id))
	var a SessionAuth
	var userID string
	var expired, revoked, tokenExpired, disabled bool
	err := db.QueryRow(ctx, `SELECT s.user_id, s.csrf_hash, s.expires_at <= now(),
			coalesce(t.revoked_at IS NOT NULL, false), coalesce(t.expires_at <= now(), false), u.disabled_at IS NOT NULL
		FROM app_sessions s JOIN users u ON u.id = s.user_id LEFT JOIN api_tokens t ON t.id = s.token_id
		WHERE s.session_hash = $1`, sum[:]).Scan(&userID, &a.csrfHash, &expired, &revoked, &tokenExpired, &disabled)
	switch {
	case errors.Is(store.Map(err), store.ErrNotFound):
		return SessionAuth{}, ErrSessionExpired
	case err != nil:
		return SessionAuth{}, err
	case expired:
		return SessionAuth{}, ErrSessionExpired
	case revoked:
		return SessionAuth{}, ErrTokenRevoked
	case tokenExpired:
		return SessionAuth{}, ErrTokenExpired
	case disabled:
		return SessionAuth{}, ErrUserDisabled
	}
	a.Principal, err = Load(ctx, db, userID)
	return a, err
}

// CloseSession ends a session (signing out); an unknown one changes nothing.
func CloseSession(ctx context.Context, db store.DB, id string) error {
	sum := sha256.Sum256([]byte(id))
	_, err := db.Exec(ctx, `DELETE FROM app_sessions WHERE session_hash = $1 OR expires_at < now() - interval '1 day'`, sum[:])
	return store.Map(err)
}

// UserName is a user's display name.
func UserName(ctx context.Context, db store.DB, userID string) (string, error) {
	var name string
	err := db.QueryRow(ctx, `SELECT name FROM users WHERE id = $1`, userID).Scan(&name)
	return name, store.Map(err)
}

func randomValue() string {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // crypto/rand never fails on supported platforms
	return base64.RawURLEncoding.EncodeToString(raw)
}
