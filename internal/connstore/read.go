package connstore

import (
	"context"
	"encoding/json"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/store"
)

// selectSQL reads a connection with its catalog row and the owner's place
// resolved through the hierarchy.
const columns = `c.id, c.owner_scope, coalesce(c.owner_id::text, ''), c.status, c.account_hint,
	c.created_at, c.updated_at,
	coalesce(CASE c.owner_scope WHEN 'organisation' THEN c.owner_id::text WHEN 'guild' THEN og.organisation_id::text
		WHEN 'agent' THEN ag.organisation_id::text END, ''),
	coalesce(CASE c.owner_scope WHEN 'guild' THEN c.owner_id::text WHEN 'agent' THEN aa.guild_id::text END, ''),
	s.id, s.slug, s.name, s.kind, s.transport, s.url, s.auth, s.config`

const from = `
FROM mcp_connections c
JOIN mcp_servers s ON s.id = c.server_id
LEFT JOIN guilds og ON c.owner_scope = 'guild' AND og.id = c.owner_id
LEFT JOIN agents aa ON c.owner_scope = 'agent' AND aa.id = c.owner_id
LEFT JOIN guilds ag ON ag.id = aa.guild_id`

const selectSQL = `SELECT ` + columns + from

func scan(row pgx.Row) (Connection, error) {
	var c Connection
	err := scanInto(row, &c)
	return c, err
}

// scanInto reads the columns into c, then any extra columns into extra.
func scanInto(row pgx.Row, c *Connection, extra ...any) error {
	var id uuid.UUID
	var kind, auth string
	dest := append([]any{&id, &c.OwnerScope, &c.OwnerID, &c.Status, &c.AccountHint, &c.CreatedAt, &c.UpdatedAt,
		&c.OrgID, &c.GuildID,
		&c.Server.ID, &c.Server.Slug, &c.Server.Name, &kind, &c.Server.Transport, &c.Server.URL, &auth, &c.Server.Config},
		extra...)
	err := row.Scan(dest...)
	c.ID, c.Server.Kind, c.Server.Auth = ID(id), catalog.Kind(kind), catalog.Auth(auth)
	return err
}

func list(ctx context.Context, db store.DB, sql string, args ...any) ([]Connection, error) {
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Connection{}
	for rows.Next() {
		c, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Get reads one connection (store.ErrNotFound when there is none).
func Get(ctx context.Context, db store.DB, id ID) (Connection, error) {
	c, err := scan(db.QueryRow(ctx, selectSQL+` WHERE c.id = $1`, id))
	return c, store.Map(err)
}

// List reads the connections of one owner scope and owner ("" for any),
// by server name and age.
func List(ctx context.Context, db store.DB, ownerScope, ownerID string) ([]Connection, error) {
	return list(ctx, db, selectSQL+` WHERE ($1 = '' OR c.owner_scope = $1) AND ($2 = '' OR c.owner_id::text = $2)
		ORDER BY s.name, c.created_at`, ownerScope, ownerID)
}

// All reads every connection, by server slug, owner scope and age.
func All(ctx context.Context, db store.DB) ([]Connection, error) {
	return list(ctx, db, selectSQL+` ORDER BY s.slug, c.owner_scope, c.created_at`)
}

// ByIDs reads the named connections that exist, by server slug and id.
func ByIDs(ctx context.Context, db store.DB, ids []string) ([]Connection, error) {
	return list(ctx, db, selectSQL+` WHERE c.id::text = ANY($1) ORDER BY s.slug, c.id`, ids)
}

// OfAgentChain reads the logins owned along an agent's chain (platform, its
// organisation, its guild, itself), by id.
func OfAgentChain(ctx context.Context, db store.DB, agentID string) ([]Connection, error) {
	return list(ctx, db, selectSQL+` JOIN agent_chain_logins l ON l.connection_id = c.id WHERE l.agent_id::text = $1
		ORDER BY c.id`, agentID)
}

// Live is the subset of ids whose login exists and is not disconnected.
func Live(ctx context.Context, db store.DB, ids []string) (map[string]bool, error) {
	rows, err := db.Query(ctx, `SELECT id::text FROM mcp_connections WHERE id::text = ANY($1) AND status <> $2`,
		ids, StatusDisconnected)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	live := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		live[id] = true
	}
	return live, rows.Err()
}

// IDsUnder lists the logins that deleting a place removes with it: those it
// owns and, for an organisation or a guild, those of its guilds and agents.
func IDsUnder(ctx context.Context, db store.DB, scope, id string) ([]string, error) {
	return ids(ctx, db, `SELECT c.id::text FROM mcp_connections c
LEFT JOIN guilds g ON c.owner_scope = 'guild' AND g.id = c.owner_id
LEFT JOIN agents a ON c.owner_scope = 'agent' AND a.id = c.owner_id
LEFT JOIN guilds ag ON ag.id = a.guild_id
WHERE (c.owner_scope = $1 AND c.owner_id::text = $2)
   OR ($1 = 'organisation' AND (g.organisation_id::text = $2 OR ag.organisation_id::text = $2))
   OR ($1 = 'guild' AND a.guild_id::text = $2)`, scope, id)
}

// IDsOfServer lists the logins of a catalog server (by id or slug).
func IDsOfServer(ctx context.Context, db store.DB, idOrSlug string) ([]string, error) {
	return ids(ctx, db, `SELECT c.id::text FROM mcp_connections c JOIN mcp_servers s ON s.id = c.server_id
WHERE s.id::text = $1 OR s.slug = $1`, idOrSlug)
}

func ids(ctx context.Context, db store.DB, sql string, args ...any) ([]string, error) {
	rows, err := db.Query(ctx, sql, args...)
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

// CountWithCredentials counts a server's logins that hold a stored credential.
func CountWithCredentials(ctx context.Context, db store.DB, serverID string) (int, error) {
	var n int
	err := db.QueryRow(ctx, `SELECT count(*) FROM mcp_connections c JOIN connection_credentials cr ON cr.connection_id = c.id
		WHERE c.server_id::text = $1`, serverID).Scan(&n)
	return n, store.Map(err)
}

// ListingTool reads the logins whose stored tool list has a model-facing
// tool name.
func ListingTool(ctx context.Context, db store.DB, name string) ([]Connection, error) {
	return list(ctx, db, selectSQL+` WHERE c.id IN (SELECT connection_id FROM mcp_tools WHERE name = $1) ORDER BY c.id`, name)
}

// StoredTool is one tool of a login's stored tool list (mcp_tools).
type StoredTool struct {
	RemoteName, Name, Description string
	Schema                        json.RawMessage
}

// ByIDsWithTools reads the named connections that exist with their stored
// tool lists (by tool name), in one query.
func ByIDsWithTools(ctx context.Context, db store.DB, ids []string) ([]Connection, map[ID][]StoredTool, error) {
	rows, err := db.Query(ctx, `SELECT `+columns+`,
		t.remote_name, coalesce(t.name, ''), coalesce(t.description, ''), coalesce(t.input_schema, '{}'::jsonb)`+from+`
		LEFT JOIN mcp_tools t ON t.connection_id = c.id
		WHERE c.id::text = ANY($1) ORDER BY s.slug, c.id, t.name`, ids)
	if err != nil {
		return nil, nil, store.Map(err)
	}
	defer rows.Close()
	var out []Connection
	tools := map[ID][]StoredTool{}
	for rows.Next() {
		var c Connection
		var remote *string
		var t StoredTool
		if err := scanInto(rows, &c, &remote, &t.Name, &t.Description, &t.Schema); err != nil {
			return nil, nil, err
		}
		if len(out) == 0 || out[len(out)-1].ID != c.ID {
			out = append(out, c)
		}
		if remote != nil {
			t.RemoteName = *remote
			tools[c.ID] = append(tools[c.ID], t)
		}
	}
	return out, tools, rows.Err()
}
