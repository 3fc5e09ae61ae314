package connectors

import (
	"context"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
)

// RecordOAuthStart records who starts a login's OAuth flow: the user, and
// the hash of the nonce the starting browser holds as a cookie. A new start
// of the same login replaces the old one.
func RecordOAuthStart(ctx context.Context, db store.DB, connectionID, userID string, browserHash []byte) error {
	_, err := db.Exec(ctx, `INSERT INTO connection_oauth_starts (connection_id, user_id, browser_hash) VALUES ($1, $2, $3)
		ON CONFLICT (connection_id) DO UPDATE SET user_id = EXCLUDED.user_id, browser_hash = EXCLUDED.browser_hash, created_at = now()`,
		connectionID, userID, browserHash)
	return store.Map(err)
}

// PendingOAuth is what a callback may know of the login its state names
// before touching it.
type PendingOAuth struct {
	ConnectionID string
	Issuer       string // "" when none was recorded
	// IssRequired: the authorization server said it puts iss in every
	// authorization response (RFC 9207), so a callback without one is forged.
	IssRequired bool
	BrowserHash []byte // nil when nobody is recorded as the starter
	StartedBy   string // "" when nobody is recorded as the starter
}

// FindPendingOAuth loads the unexpired pending login of a state, with its
// starter and the issuer it was started with: the one recorded with the
// pending login, else the catalog row's. store.ErrNotFound when there is none.
func FindPendingOAuth(ctx context.Context, db store.DB, state string) (PendingOAuth, error) {
	var pl PendingOAuth
	var startedBy *string
	err := db.QueryRow(ctx, `SELECT p.connection_id, coalesce(p.issuer, ''), st.browser_hash, st.user_id::text
		FROM connection_oauth_pending p
		LEFT JOIN connection_oauth_starts st ON st.connection_id = p.connection_id
		WHERE p.state_hash = $1 AND p.expires_at > now()`, stateHash(state)).
		Scan(&pl.ConnectionID, &pl.Issuer, &pl.BrowserHash, &startedBy)
	if err != nil {
		return PendingOAuth{}, store.Map(err)
	}
	id, err := connstore.ParseID(pl.ConnectionID)
	if err != nil {
		return PendingOAuth{}, err
	}
	c, err := connstore.Get(ctx, db, id)
	if err != nil {
		return PendingOAuth{}, err
	}
	cfg, _ := catalog.ParseConfig(c.Server.Config) // lenient: no issuer recorded
	if pl.Issuer == "" {
		pl.Issuer = cfg.OAuth.Issuer
	}
	// The promise is the issuer's: it holds for the login only while the
	// row still names the issuer the login was started with.
	pl.IssRequired = pl.Issuer != "" && cfg.OAuth.Issuer == pl.Issuer && cfg.OAuth.IssParameterSupported
	if startedBy != nil {
		pl.StartedBy = *startedBy
	}
	return pl, nil
}
