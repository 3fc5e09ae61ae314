package grants

import (
	"context"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
)

// ChainRemoteLogins lists the connected logins of remote MCP servers owned along
// an agent's chain (platform, its organisation, its guild, itself): the sessions
// whose stored tool lists a run start may need to refresh.
func ChainRemoteLogins(ctx context.Context, db store.DB, agentID string) ([]string, error) {
	chain, err := connstore.OfAgentChain(ctx, db, agentID)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range chain {
		if c.Status == connstore.StatusConnected && c.Server.Kind == catalog.KindRemote {
			ids = append(ids, c.ID.String())
		}
	}
	return ids, nil
}
