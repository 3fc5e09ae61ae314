package githubapp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// PendingTTL is how long an install or authorize attempt waits for GitHub.
const PendingTTL = 15 * time.Minute

// Choice is an installation the user's token reached, offered by the picker
// when there were several.
type Choice struct {
	InstallationID int64  `json:"installation_id"`
	Account        string `json:"account"`
	// Repositories are what the user reaches in it (read with the user's
	// token, which is gone by the time the picker chooses).
	Repositories []RepoAccess `json:"repositories,omitempty"`
}

// Pending is an attempt waiting for GitHub's callback.
type Pending struct {
	ConnectionID     string
	RedirectURI      string
	InstallationHint int64 // a setup redirect's id: proves nothing by itself
	Choices          []Choice
}

// StateHash is the stored form of a state.
func StateHash(state string) []byte {
	h := sha256.Sum256([]byte(state))
	return h[:]
}

// BeginPending stores a fresh attempt for a login (an older one of the same
// login stops counting) and answers its state.
func BeginPending(ctx context.Context, db store.DB, connectionID, redirectURI string) (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	state := base64.RawURLEncoding.EncodeToString(b[:])
	if _, err := db.Exec(ctx, `DELETE FROM github_install_pending WHERE connection_id = $1 OR expires_at < now() - interval '1 day'`, connectionID); err != nil {
		return "", store.Map(err)
	}
	_, err := db.Exec(ctx, `INSERT INTO github_install_pending (state_hash, connection_id, redirect_uri, expires_at)
VALUES ($1, $2, $3, now() + make_interval(secs => $4))`, StateHash(state), connectionID, redirectURI, PendingTTL.Seconds())
	return state, store.Map(err)
}

// FindPending loads the unexpired attempt of a state; store.ErrNotFound
// when there is none (unknown, used or expired).
func FindPending(ctx context.Context, db store.DB, state string) (Pending, error) {
	var p Pending
	var hint *int64
	var choices []byte
	err := db.QueryRow(ctx, `SELECT connection_id::text, redirect_uri, installation_hint, choices FROM github_install_pending
WHERE state_hash = $1 AND expires_at > now()`, StateHash(state)).Scan(&p.ConnectionID, &p.RedirectURI, &hint, &choices)
	if err != nil {
		return Pending{}, store.Map(err)
	}
	if hint != nil {
		p.InstallationHint = *hint
	}
	if len(choices) > 0 {
		if err := json.Unmarshal(choices, &p.Choices); err != nil {
			return Pending{}, err
		}
	}
	return p, nil
}

// SetHint records the installation a setup redirect named.
func SetHint(ctx context.Context, db store.DB, state string, installationID int64) error {
	_, err := db.Exec(ctx, `UPDATE github_install_pending SET installation_hint = $2 WHERE state_hash = $1`, StateHash(state), installationID)
	return store.Map(err)
}

// SetChoices records the installations the picker offers.
func SetChoices(ctx context.Context, db store.DB, state string, choices []Choice) error {
	b, err := json.Marshal(choices)
	if err != nil {
		return err
	}
	_, err = db.Exec(ctx, `UPDATE github_install_pending SET choices = $2 WHERE state_hash = $1`, StateHash(state), b)
	return store.Map(err)
}

// DropPending deletes a login's attempts (done, refused or waiting for an
// admin's approval).
func DropPending(ctx context.Context, db store.DB, connectionID string) error {
	_, err := db.Exec(ctx, `DELETE FROM github_install_pending WHERE connection_id = $1`, connectionID)
	return store.Map(err)
}
