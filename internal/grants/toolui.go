package grants

import (
	"context"
	"errors"

	"github.com/guilds/guilds/internal/store"
)

// ToolUI is the ui:// page a login's listed tool names (MCP Apps,
// docs/adr/0620), as its last listing stored it; "" when it names none or
// is no longer listed.
func ToolUI(ctx context.Context, db store.DB, connectionID, remoteName string) (string, error) {
	var uri *string
	err := db.QueryRow(ctx, `SELECT ui_resource_uri FROM mcp_tools WHERE connection_id = $1 AND remote_name = $2`,
		connectionID, remoteName).Scan(&uri)
	if err = store.Map(err); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return "", nil
		}
		return "", err
	}
	if uri == nil {
		return "", nil
	}
	return *uri, nil
}
