package access

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// AuthError is a refused credential with the code the API answers (401).
type AuthError struct {
	Code    string
	Message string
}

func (e *AuthError) Error() string { return e.Message }

// Is makes every AuthError an ErrUnauthenticated.
func (e *AuthError) Is(target error) bool { return target == ErrUnauthenticated }

var (
	ErrTokenRevoked = &AuthError{Code: "token_revoked", Message: "this API token was revoked: ask an instance admin for a new one"}
	ErrTokenExpired = &AuthError{Code: "token_expired", Message: "this API token has expired: mint a new one (guilds tokens create)"}
	ErrUserDisabled = &AuthError{Code: "user_disabled", Message: "the user of this API token is disabled"}
)

// MaxLifetime bounds a token's expiry.
const MaxLifetime = 10 * 365 * 24 * time.Hour

// Token is an API token's record; its plain value is never stored.
type Token struct {
	ID         string     `json:"id"`
	UserID     string     `json:"user_id"`
	Name       string     `json:"name"`
	CreatedAt  time.Time  `json:"created_at"`
	LastUsedAt *time.Time `json:"last_used_at,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
	RevokedAt  *time.Time `json:"revoked_at,omitempty"`
}

// ParseLifetime reads a token lifetime: a positive whole number of minutes
// (30m), hours (12h) or days (30d), at most MaxLifetime.
func ParseLifetime(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	units := map[byte]time.Duration{'m': time.Minute, 'h': time.Hour, 'd': 24 * time.Hour}
	if len(s) < 2 {
		return 0, fmt.Errorf("%q is not a lifetime: write a number and m, h or d, like 30d", s)
	}
	unit, ok := units[s[len(s)-1]]
	n, err := strconv.Atoi(s[:len(s)-1])
	if !ok || err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a lifetime: write a positive number and m, h or d, like 30d", s)
	}
	d := time.Duration(n) * unit
	if d > MaxLifetime || d/unit != time.Duration(n) {
		return 0, fmt.Errorf("%q is longer than ten years", s)
	}
	return d, nil
}

// MintToken creates an API token for a user and returns its plain value, which is never stored.
func MintToken(ctx context.Context, db store.DB, userID, name string) (string, error) {
	_, plain, err := MintExpiring(ctx, db, userID, name, 0)
	return plain, err
}

// MintExpiring creates an API token that expires after lifetime (0: never)
// and returns its record and plain value.
func MintExpiring(ctx context.Context, db store.DB, userID, name string, lifetime time.Duration) (Token, string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return Token{}, "", err
	}
	plain := TokenPrefix + base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(plain))
	var expires any
	if lifetime > 0 {
		expires = time.Now().Add(lifetime)
	}
	t := Token{UserID: userID, Name: name}
	err := db.QueryRow(ctx, `INSERT INTO api_tokens (user_id, name, token_hash, expires_at) VALUES ($1, $2, $3, $4)
		RETURNING id, created_at, expires_at`, userID, name, sum[:], expires).Scan(&t.ID, &t.CreatedAt, &t.ExpiresAt)
	if err != nil {
		return Token{}, "", store.Map(err)
	}
	return t, plain, nil
}

// Authenticate finds the principal behind a plain API token. A revoked or
// expired token, or one of a disabled user, is refused with its own AuthError.
func Authenticate(ctx context.Context, db store.DB, token string) (Principal, error) {
	if !strings.HasPrefix(token, TokenPrefix) {
		return Principal{}, ErrUnauthenticated
	}
	sum := sha256.Sum256([]byte(token))
	var id, userID string
	var revoked, disabled bool
	var expires *time.Time
	err := db.QueryRow(ctx, `SELECT t.id, t.user_id, t.revoked_at IS NOT NULL, t.expires_at, u.disabled_at IS NOT NULL
		FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1`, sum[:]).
		Scan(&id, &userID, &revoked, &expires, &disabled)
	switch {
	case errors.Is(store.Map(err), store.ErrNotFound):
		return Principal{}, ErrUnauthenticated
	case err != nil:
		return Principal{}, err
	case revoked:
		return Principal{}, ErrTokenRevoked
	case disabled:
		return Principal{}, ErrUserDisabled
	case expires != nil && !time.Now().Before(*expires):
		return Principal{}, ErrTokenExpired
	}
	if _, err := db.Exec(ctx, `UPDATE api_tokens SET last_used_at = now() WHERE id = $1`, id); err != nil {
		return Principal{}, err
	}
	return Load(ctx, db, userID)
}

// ListTokens lists one user's tokens, or every user's when userID is "".
func ListTokens(ctx context.Context, db store.DB, userID string) ([]Token, error) {
	rows, err := db.Query(ctx, `SELECT id, user_id, name, created_at, last_used_at, expires_at, revoked_at
		FROM api_tokens WHERE $1 = '' OR user_id::text = $1 ORDER BY created_at, id`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Token{}
	for rows.Next() {
		var t Token
		if err := rows.Scan(&t.ID, &t.UserID, &t.Name, &t.CreatedAt, &t.LastUsedAt, &t.ExpiresAt, &t.RevokedAt); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// RevokeToken revokes a token for good: the caller's own, or any when the
// caller is an instance admin. Revoking a revoked token changes nothing.
// Another user's token reads as not found.
func RevokeToken(ctx context.Context, db store.DB, p Principal, id string) (Token, error) {
	var t Token
	err := db.QueryRow(ctx, `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
		WHERE id::text = $1 AND ($2 OR user_id::text = $3)
		RETURNING id, user_id, name, created_at, last_used_at, expires_at, revoked_at`, id, p.Admin, p.UserID).
		Scan(&t.ID, &t.UserID, &t.Name, &t.CreatedAt, &t.LastUsedAt, &t.ExpiresAt, &t.RevokedAt)
	return t, store.Map(err)
}

// SetUserDisabled disables a user (every token of theirs is refused from now
// on) or enables them again.
func SetUserDisabled(ctx context.Context, db store.DB, userID string, disabled bool) error {
	tag, err := db.Exec(ctx, `UPDATE users SET disabled_at = CASE WHEN $2 THEN coalesce(disabled_at, now()) END
		WHERE id::text = $1`, userID, disabled)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}
