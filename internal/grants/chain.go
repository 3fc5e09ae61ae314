package grants

import (
	"context"

	"github.com/guilds/guilds/internal/store"
)

// ChainRemoteLogins lists the connected logins of remote MCP servers owned along
// an agent's chain (platform, its organisation, its guild, itself): the sessions
// whose stored tool lists a run start may need to refresh.
func ChainRemoteLogins(ctx context.Context, db store.DB, agentID string) ([]string, error) {
	rows, err := db.Query(ctx, `
		SELECT c.id::text
		FROM agent_chain_logins l
		JOIN mcp_connections c ON c.id = l.connection_id
		JOIN mcp_servers s ON s.id = c.server_id
		WHERE l.agent_id = $1 AND c.status = 'connected' AND s.kind = 'remote'
		ORDER BY c.id`, agentID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
