package connstore

import (
	"context"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/store"
)

// FindForOwner locks the login of a server at one owner (ownerID nil at the
// platform scope) for the calling transaction (store.ErrNotFound when none).
func FindForOwner(ctx context.Context, db store.DB, serverID, ownerScope string, ownerID *string) (ID, Status, error) {
	var id uuid.UUID
	var status Status
	err := db.QueryRow(ctx, `SELECT id, status FROM mcp_connections WHERE server_id::text = $1 AND owner_scope = $2
		AND owner_id IS NOT DISTINCT FROM $3::uuid FOR UPDATE`, serverID, ownerScope, ownerID).Scan(&id, &status)
	return ID(id), status, store.Map(err)
}

// Insert creates a pending login of a server at one owner.
func Insert(ctx context.Context, db store.DB, serverID, ownerScope string, ownerID *string) (ID, error) {
	var id uuid.UUID
	err := db.QueryRow(ctx, `INSERT INTO mcp_connections (server_id, owner_scope, owner_id) VALUES ($1::uuid, $2, $3::uuid)
		RETURNING id`, serverID, ownerScope, ownerID).Scan(&id)
	return ID(id), store.Map(err)
}

// Ensure returns the login of the catalog server with a slug at one owner
// (nil at the platform scope), creating it pending when absent; created
// reports a new row. store.ErrNotFound: no catalog server has the slug.
func Ensure(ctx context.Context, db store.DB, serverSlug, ownerScope string, ownerID *uuid.UUID) (id ID, created bool, err error) {
	var u uuid.UUID
	err = db.QueryRow(ctx, `
WITH srv AS (SELECT id FROM mcp_servers WHERE slug = $1),
ins AS (
    INSERT INTO mcp_connections (server_id, owner_scope, owner_id)
    SELECT id, $2, $3 FROM srv
    ON CONFLICT DO NOTHING RETURNING id)
SELECT id, true FROM ins
UNION ALL
SELECT c.id, false FROM mcp_connections c JOIN srv ON c.server_id = srv.id
WHERE c.owner_scope = $2 AND c.owner_id IS NOT DISTINCT FROM $3
LIMIT 1`, serverSlug, ownerScope, ownerID).Scan(&u, &created)
	return ID(u), created, store.Map(err)
}

// Touch records activity on a login (a retried connect).
func Touch(ctx context.Context, db store.DB, id ID) error {
	_, err := db.Exec(ctx, `UPDATE mcp_connections SET updated_at = now() WHERE id = $1`, id)
	return store.Map(err)
}

// SetConnected marks a login connected with its account hint.
func SetConnected(ctx context.Context, db store.DB, id ID, accountHint string) error {
	_, err := db.Exec(ctx, `UPDATE mcp_connections SET status = $3, account_hint = $2, updated_at = now()
		WHERE id = $1`+notifyReturning, id, accountHint, StatusConnected)
	return store.Map(err)
}

// SetConnectedKeepingHint marks a login connected; an empty hint keeps the
// stored one.
func SetConnectedKeepingHint(ctx context.Context, db store.DB, id ID, accountHint string) error {
	_, err := db.Exec(ctx, `UPDATE mcp_connections SET status = $3,
    account_hint = CASE WHEN $2 = '' THEN account_hint ELSE $2 END, updated_at = now() WHERE id = $1`+notifyReturning,
		id, accountHint, StatusConnected)
	return store.Map(err)
}

// SetDisconnected marks a login disconnected; its bindings stay.
// store.ErrNotFound when there is no such login.
func SetDisconnected(ctx context.Context, db store.DB, id ID) error {
	tag, err := db.Exec(ctx, `UPDATE mcp_connections SET status = $2, updated_at = now() WHERE id = $1`+notifyReturning,
		id, StatusDisconnected)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Delete removes a login; its bindings, listed tools and credentials cascade.
func Delete(ctx context.Context, db store.DB, id ID) error {
	_, err := db.Exec(ctx, `DELETE FROM mcp_connections WHERE id = $1`+notifyReturning, id)
	return store.Map(err)
}

// DeleteUnlessConnected removes a login a connect created and could not
// finish; one that got connected meanwhile is kept.
func DeleteUnlessConnected(ctx context.Context, db store.DB, id ID) error {
	_, err := db.Exec(ctx, `DELETE FROM mcp_connections WHERE id = $1 AND status <> $2`+notifyReturning, id, StatusConnected)
	return store.Map(err)
}

// DeleteNeverLoggedIn removes a login that is still pending and holds no
// stored credential, and reports whether it did.
func DeleteNeverLoggedIn(ctx context.Context, db store.DB, id ID) (bool, error) {
	tag, err := db.Exec(ctx, `
DELETE FROM mcp_connections c WHERE c.id = $1 AND c.status = $2
AND NOT EXISTS (SELECT 1 FROM connection_credentials cr WHERE cr.connection_id = c.id)`+notifyReturning, id, StatusPending)
	if err != nil {
		return false, store.Map(err)
	}
	return tag.RowsAffected() == 1, nil
}

// DeleteNeverWorked removes a new login that never worked: a pending one, or
// one whose token the service refused after the exchange (disconnected, no
// live credential) and that nothing was ever bound to. An older login that
// once worked keeps its row and bindings.
func DeleteNeverWorked(ctx context.Context, db store.DB, id ID) error {
	_, err := db.Exec(ctx, `DELETE FROM mcp_connections c WHERE c.id = $1 AND (c.status = $2 OR (c.status = $3
			AND NOT EXISTS (SELECT 1 FROM connection_credentials cr WHERE cr.connection_id = c.id AND cr.state <> 'disconnected')
			AND NOT EXISTS (SELECT 1 FROM bindings b WHERE b.connection_id = c.id)))`+notifyReturning, id, StatusPending, StatusDisconnected)
	return store.Map(err)
}
