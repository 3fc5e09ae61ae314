package connstore

import (
	"context"

	"github.com/guilds/guilds/internal/store"
)

// Channel is the PostgreSQL notification channel a login's id is sent on
// whenever its row changes or goes: status, settings, delete (its own, or a
// cascade from its owner or its catalog row when the deleting transaction
// announces it). Sent in the writing transaction, so it arrives only once
// the change is committed. The MCP pool of every process listens on it to
// drop what it holds in memory for the login (docs/adr/0627).
const Channel = "guilds_logins"

// notifyReturning is what the writes below return: their row's id sent on
// Channel, evaluated once per row written.
const notifyReturning = ` RETURNING pg_notify('` + Channel + `', id::text)`

// Announce sends the ids on Channel in db's transaction: a caller that
// changes logins other than through this package (a cascade) calls it in
// the same transaction.
func Announce(ctx context.Context, db store.DB, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := db.Exec(ctx, `SELECT pg_notify($1, id) FROM unnest($2::text[]) AS id`, Channel, ids)
	return store.Map(err)
}

// AnnounceServer sends on Channel every login of a catalog server, whose
// row (URL, transport, auth, config) the logins are read with.
func AnnounceServer(ctx context.Context, db store.DB, serverID string) error {
	_, err := db.Exec(ctx, `SELECT pg_notify($1, id::text) FROM mcp_connections WHERE server_id::text = $2`, Channel, serverID)
	return store.Map(err)
}
