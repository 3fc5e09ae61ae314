package audit

import (
	"context"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
)

// Actors an event names when no person did it.
const (
	// ActorPlatform is the box itself: a token refresh, a terminal command.
	ActorPlatform = "platform"
	// ActorTerminal is an operator at the guilds command line.
	ActorTerminal = "terminal"
)

// Actor is how an event names the person behind a request: user:<id>, or
// "operator" for a token that is no user's.
func Actor(p access.Principal) string {
	if p.UserID != "" {
		return "user:" + p.UserID
	}
	return "operator"
}

// AgentActor names an agent acting in a run.
func AgentActor(agentID string) string { return "agent:" + agentID }

// RecordLogin writes an event about a login (connect, disconnect, refresh
// failure) from the login's row as it stands, in the caller's transaction:
// its owner's organisation, guild and agent, its server's slug as the tool,
// its scope and account hint. An empty actor is the user who started the
// login's latest browser login (OAuth, GitHub), or the platform when nobody
// did. A login that is gone writes nothing; an owner that is gone leaves
// the event without its place.
func RecordLogin(ctx context.Context, db store.DB, connectionID, action, outcome, actor string) error {
	_, err := db.Exec(ctx, `INSERT INTO audit_events (organisation_id, guild_id, agent_id, action, tool, kind,
			connection_id, login_scope, account_hint, outcome, actor)
		SELECT CASE c.owner_scope WHEN 'organisation' THEN o.id WHEN 'guild' THEN g.organisation_id
				WHEN 'agent' THEN ag.organisation_id END,
			CASE c.owner_scope WHEN 'guild' THEN c.owner_id WHEN 'agent' THEN a.guild_id END,
			CASE c.owner_scope WHEN 'agent' THEN c.owner_id END,
			$2, s.slug, 'login', c.id, c.owner_scope, c.account_hint, $3,
			CASE WHEN $4 <> '' THEN $4 WHEN st.user_id IS NOT NULL THEN 'user:' || st.user_id::text ELSE $5 END
		FROM mcp_connections c
		JOIN mcp_servers s ON s.id = c.server_id
		LEFT JOIN organisations o ON c.owner_scope = 'organisation' AND o.id = c.owner_id
		LEFT JOIN guilds g ON c.owner_scope = 'guild' AND g.id = c.owner_id
		LEFT JOIN agents a ON c.owner_scope = 'agent' AND a.id = c.owner_id
		LEFT JOIN guilds ag ON ag.id = a.guild_id
		LEFT JOIN connection_oauth_starts st ON st.connection_id = c.id
		WHERE c.id = $1::uuid`, connectionID, action, outcome, actor, ActorPlatform)
	return store.Map(err)
}
