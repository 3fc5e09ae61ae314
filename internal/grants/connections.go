package grants

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Status is a login's status (the status column of mcp_connections). It is
// the connectors engine's type, so that a grants.Connection and the engine's
// view of the same row compare without conversions.
type Status = connectors.ConnStatus

// Connection statuses.
const (
	StatusPending      = connectors.StatusPending
	StatusConnected    = connectors.StatusConnected
	StatusDisconnected = connectors.StatusDisconnected
)

// Connection is a login's metadata; credentials never appear here.
type Connection struct {
	ID          string    `json:"id"`
	ServerID    string    `json:"server_id"`
	ServerSlug  string    `json:"server_slug"`
	ServerName  string    `json:"server_name"`
	OwnerScope  Scope     `json:"owner_scope"`
	OwnerID     string    `json:"owner_id,omitempty"`
	Status      Status    `json:"status"`
	AccountHint string    `json:"account_hint"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
	owner       Place
}

// Owner is the place that owns the login.
func (c Connection) Owner() Place { return c.owner }

// ConnectInput asks for a login of a server at a scope.
type ConnectInput struct {
	ServerID   string `json:"server_id"`
	Slug       string `json:"slug"`
	OwnerScope Scope  `json:"owner_scope"`
	OwnerID    string `json:"owner_id"`
}

// ErrNotSetUp is returned when the box lacks what a server's Connect needs.
type ErrNotSetUp struct {
	Server  string
	Missing []string
}

func (e *ErrNotSetUp) Error() string {
	msg := e.Server + " is not set up on this box"
	if len(e.Missing) > 0 {
		msg += "; set " + joinNames(e.Missing)
	} else {
		msg += "; the instance admin must give its catalog entry an OAuth client (config.oauth.client_id) or turn on dynamic registration"
	}
	return msg
}

func joinNames(l []string) string {
	out := ""
	for i, s := range l {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}

// ErrPlatformReserved refuses a platform-scope Connect and any change to a
// platform login's credential made through the API (the spec keeps them
// reserved). The box's own credentials come from its environment.
var ErrPlatformReserved = errors.New("platform-scope logins are reserved: the box's own credentials come from its environment " +
	"(the integrations GET /api/instance lists, such as TAVILY_API_KEY or the GitHub App) and the platform seed, never from a Connect")

// connection columns, with the owner's place resolved through the hierarchy.
const connSelect = `SELECT c.id, c.server_id, s.slug, s.name, c.owner_scope, coalesce(c.owner_id::text, ''), c.status,
	c.account_hint, c.created_at, c.updated_at,
	coalesce(CASE c.owner_scope WHEN 'organisation' THEN c.owner_id::text WHEN 'guild' THEN og.organisation_id::text
		WHEN 'agent' THEN ag.organisation_id::text END, ''),
	coalesce(CASE c.owner_scope WHEN 'guild' THEN c.owner_id::text WHEN 'agent' THEN aa.guild_id::text END, '')
FROM mcp_connections c
JOIN mcp_servers s ON s.id = c.server_id
LEFT JOIN guilds og ON c.owner_scope = 'guild' AND og.id = c.owner_id
LEFT JOIN agents aa ON c.owner_scope = 'agent' AND aa.id = c.owner_id
LEFT JOIN guilds ag ON ag.id = aa.guild_id`

func scanConn(row interface{ Scan(...any) error }) (Connection, error) {
	var c Connection
	var org, guild string
	err := row.Scan(&c.ID, &c.ServerID, &c.ServerSlug, &c.ServerName, &c.OwnerScope, &c.OwnerID, &c.Status,
		&c.AccountHint, &c.CreatedAt, &c.UpdatedAt, &org, &guild)
	c.owner = Place{Scope: c.OwnerScope, OrgID: org, GuildID: guild}
	if c.OwnerScope == ScopeAgent {
		c.owner.AgentID = c.OwnerID
	}
	return c, err
}

// LoadConnection reads a connection without a visibility check.
func LoadConnection(ctx context.Context, db store.DB, id string) (Connection, error) {
	c, err := scanConn(db.QueryRow(ctx, connSelect+` WHERE c.id::text = $1`, id))
	return c, store.Map(err)
}

func canSeeConn(p access.Principal, c Connection) bool {
	return c.OwnerScope == ScopePlatform || p.CanSeeOrg(c.owner.OrgID)
}

// GetConnection returns a connection the principal can see.
func GetConnection(ctx context.Context, db store.DB, p access.Principal, id string) (Connection, error) {
	c, err := LoadConnection(ctx, db, id)
	if err != nil {
		return c, err
	}
	if !canSeeConn(p, c) {
		return Connection{}, store.ErrNotFound
	}
	return c, nil
}

// ListConnections lists the visible connections, all of them or those of one owner.
func ListConnections(ctx context.Context, db store.DB, p access.Principal, ownerScope Scope, ownerID string) ([]Connection, error) {
	if ownerScope != "" {
		var probs validation.Problems
		checkScopeInput(&probs, "owner_scope", "owner_id", ownerScope, ownerID)
		if err := probs.Err(); err != nil {
			return nil, err
		}
		if _, err := visiblePlace(ctx, db, p, ownerScope, ownerID); err != nil {
			return nil, err
		}
	} else if ownerID != "" {
		return nil, &validation.Error{Problems: []validation.Problem{{Field: "owner_scope", Message: "is required with owner_id"}}}
	}
	rows, err := db.Query(ctx, connSelect+` WHERE ($1 = '' OR c.owner_scope = $1) AND ($2 = '' OR c.owner_id::text = $2)
		ORDER BY s.name, c.created_at`, string(ownerScope), ownerID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Connection{}
	for rows.Next() {
		c, err := scanConn(rows)
		if err != nil {
			return nil, err
		}
		if canSeeConn(p, c) {
			out = append(out, c)
		}
	}
	return out, rows.Err()
}

// Connect creates a pending login of a server at a scope, or returns the
// pending or disconnected one already there so it can be retried. A connected
// login at the same scope is a conflict. created reports a new row.
func Connect(ctx context.Context, db store.DB, p access.Principal, integ *integrations.Registry, in ConnectInput) (c Connection, created bool, err error) {
	var probs validation.Problems
	probs.Check(in.ServerID != "" || in.Slug != "", "server_id", "server_id or slug is required")
	checkScopeInput(&probs, "owner_scope", "owner_id", in.OwnerScope, in.OwnerID)
	if err := probs.Err(); err != nil {
		return c, false, err
	}
	if in.OwnerScope == ScopePlatform {
		return c, false, fmt.Errorf("%w; connect this server at an organisation, guild or agent scope instead", ErrPlatformReserved)
	}
	owner, err := visiblePlace(ctx, db, p, in.OwnerScope, in.OwnerID)
	if err != nil {
		return c, false, err
	}
	key, field := in.ServerID, "server_id"
	if key == "" {
		key, field = in.Slug, "slug"
	}
	srv, err := GetServer(ctx, db, integ, key)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !srv.Published) {
		return c, false, &validation.Error{Problems: []validation.Problem{{Field: field,
			Message: fmt.Sprintf("%q names no published catalog server (GET /api/mcp/servers lists them)", key)}}}
	}
	if err != nil {
		return c, false, err
	}
	if srv.OAuthSetupState == SetupUnsupported {
		return c, false, &ErrNotSetUp{Server: srv.Name, Missing: srv.MissingVariables}
	}
	var ownerArg any
	if id := owner.ID(); id != "" {
		ownerArg = id
	}
	var id string
	var status Status
	err = db.QueryRow(ctx, `SELECT id, status FROM mcp_connections WHERE server_id = $1 AND owner_scope = $2
		AND owner_id IS NOT DISTINCT FROM $3::uuid FOR UPDATE`, srv.ID, string(in.OwnerScope), ownerArg).Scan(&id, &status)
	switch {
	case err == nil && status == StatusConnected:
		return c, false, store.ErrConflict
	case err == nil:
		_, err = db.Exec(ctx, `UPDATE mcp_connections SET updated_at = now() WHERE id = $1`, id)
	case errors.Is(store.Map(err), store.ErrNotFound):
		created = true
		err = db.QueryRow(ctx, `INSERT INTO mcp_connections (server_id, owner_scope, owner_id) VALUES ($1, $2, $3)
			RETURNING id`, srv.ID, string(in.OwnerScope), ownerArg).Scan(&id)
	}
	if err != nil {
		return c, false, store.Map(err)
	}
	c, err = LoadConnection(ctx, db, id)
	return c, created, err
}

// DeleteConnection removes a login; its bindings, listed tools and
// credentials cascade. A platform login's credential is the box's and is
// not removed here (ErrPlatformReserved).
func DeleteConnection(ctx context.Context, db store.DB, p access.Principal, id string) error {
	c, err := GetConnection(ctx, db, p, id)
	if err != nil {
		return err
	}
	if c.OwnerScope == ScopePlatform {
		return fmt.Errorf("%w; an instance admin wipes an existing one's credential at the box with guilds connections disconnect %s", ErrPlatformReserved, c.ID)
	}
	_, err = db.Exec(ctx, `DELETE FROM mcp_connections WHERE id = $1`, c.ID)
	return store.Map(err)
}

// MarkConnected records a successful login: status connected, the account
// hint, and the enabled mcp binding (with this connection) at the owner's scope.
func MarkConnected(ctx context.Context, db store.DB, connectionID, accountHint string) error {
	c, err := LoadConnection(ctx, db, connectionID)
	if err != nil {
		return err
	}
	if _, err := db.Exec(ctx, `UPDATE mcp_connections SET status = 'connected', account_hint = $2, updated_at = now()
		WHERE id = $1`, c.ID, accountHint); err != nil {
		return store.Map(err)
	}
	conn := c.ID
	return upsertBinding(ctx, db, c.owner, KindMCP, c.ServerID, c.ServerID, true, &conn)
}

// MarkDisconnected records a login that no longer works; its bindings stay.
func MarkDisconnected(ctx context.Context, db store.DB, connectionID string) error {
	tag, err := db.Exec(ctx, `UPDATE mcp_connections SET status = 'disconnected', updated_at = now() WHERE id::text = $1`, connectionID)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// ConnectionsUnder lists the logins that deleting a place removes with it:
// those it owns and, for an organisation or a guild, those of its guilds and
// agents (the owner triggers of migration 004 cascade them). Read in the
// deleting transaction, so the caller can close their sessions and have
// every replica forget them once the delete has committed.
func ConnectionsUnder(ctx context.Context, db store.DB, scope Scope, id string) ([]string, error) {
	return connectionIDs(ctx, db, `SELECT c.id::text FROM mcp_connections c
LEFT JOIN guilds g ON c.owner_scope = 'guild' AND g.id = c.owner_id
LEFT JOIN agents a ON c.owner_scope = 'agent' AND a.id = c.owner_id
LEFT JOIN guilds ag ON ag.id = a.guild_id
WHERE (c.owner_scope = $1 AND c.owner_id::text = $2)
   OR ($1 = 'organisation' AND (g.organisation_id::text = $2 OR ag.organisation_id::text = $2))
   OR ($1 = 'guild' AND a.guild_id::text = $2)`, string(scope), id)
}

// ConnectionsOfServer lists the logins of a catalog server (by id or slug),
// which deleting the server removes with it.
func ConnectionsOfServer(ctx context.Context, db store.DB, idOrSlug string) ([]string, error) {
	return connectionIDs(ctx, db, `SELECT c.id::text FROM mcp_connections c JOIN mcp_servers s ON s.id = c.server_id
WHERE s.id::text = $1 OR s.slug = $1`, idOrSlug)
}

func connectionIDs(ctx context.Context, db store.DB, sql string, args ...any) ([]string, error) {
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
