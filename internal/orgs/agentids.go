package orgs

import (
	"context"

	"github.com/guilds/guilds/internal/store"
)

// AgentIDsOfGuild lists the agents a guild's delete takes with it.
func AgentIDsOfGuild(ctx context.Context, db store.DB, guildID string) ([]string, error) {
	return agentIDs(ctx, db, `SELECT id::text FROM agents WHERE guild_id = $1`, guildID)
}

// AgentIDsOfOrg lists the agents an organisation's delete takes with it.
func AgentIDsOfOrg(ctx context.Context, db store.DB, orgID string) ([]string, error) {
	return agentIDs(ctx, db, `SELECT a.id::text FROM agents a JOIN guilds g ON g.id = a.guild_id
		WHERE g.organisation_id = $1`, orgID)
}

// ExistingAgents reports which of ids are agents still in the database, for
// the workers' reaper of home volumes.
func ExistingAgents(ctx context.Context, db store.DB, ids []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(ids) == 0 {
		return out, nil
	}
	found, err := agentIDs(ctx, db, `SELECT id::text FROM agents WHERE id::text = ANY($1)`, ids)
	for _, id := range found {
		out[id] = true
	}
	return out, err
}

func agentIDs(ctx context.Context, db store.DB, q string, arg any) ([]string, error) {
	rows, err := db.Query(ctx, q, arg)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rows.Err()
}
