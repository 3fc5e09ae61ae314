package connstore

import (
	"context"
	"encoding/json"

	"github.com/guilds/guilds/internal/store"
)

// Settings are what the operator chose for a login after it was made
// (Drive's folder), kept in mcp_connections.config: display values, never
// secrets (those are the credential's). A reconnect keeps them.
func Settings(ctx context.Context, db store.DB, id ID) (map[string]string, error) {
	var raw []byte
	if err := db.QueryRow(ctx, `SELECT config FROM mcp_connections WHERE id = $1`, id).Scan(&raw); err != nil {
		return nil, store.Map(err)
	}
	out := map[string]string{}
	_ = json.Unmarshal(raw, &out) // a config of another shape holds no settings
	return out, nil
}

// SetSettings merges values into a login's settings.
func SetSettings(ctx context.Context, db store.DB, id ID, values map[string]string) error {
	b, err := json.Marshal(values)
	if err != nil {
		return err
	}
	tag, err := db.Exec(ctx, `UPDATE mcp_connections SET config = config || $2::jsonb, updated_at = now() WHERE id = $1`+notifyReturning, id, b)
	if err == nil && tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return store.Map(err)
}

// SetWaiting puts a login whose credential was just stored back to pending,
// with no hint: it waits for the operator's choice before it is connected
// (the engine marks a login connected as it stores a credential).
func SetWaiting(ctx context.Context, db store.DB, id ID) error {
	_, err := db.Exec(ctx, `UPDATE mcp_connections SET status = $2, account_hint = '', updated_at = now() WHERE id = $1`+notifyReturning,
		id, StatusPending)
	return store.Map(err)
}
