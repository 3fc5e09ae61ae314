package connections

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Status is a login's status: connstore's type, so that a Connection and the
// engine's view of the same row compare without conversions.
type Status = connstore.Status

// Connection statuses.
const (
	StatusPending      = connstore.StatusPending
	StatusConnected    = connstore.StatusConnected
	StatusDisconnected = connstore.StatusDisconnected
)

// Connection is a login's metadata; credentials never appear here.
type Connection struct {
	ID          string       `json:"id"`
	ServerID    string       `json:"server_id"`
	ServerSlug  string       `json:"server_slug"`
	ServerName  string       `json:"server_name"`
	OwnerScope  grants.Scope `json:"owner_scope"`
	OwnerID     string       `json:"owner_id,omitempty"`
	Status      Status       `json:"status"`
	AccountHint string       `json:"account_hint"`
	CreatedAt   time.Time    `json:"created_at"`
	UpdatedAt   time.Time    `json:"updated_at"`
	owner       grants.Place
	kind        catalog.Kind
}

// Owner is the place that owns the login.
func (c Connection) Owner() grants.Place { return c.owner }

// Kind is the catalog kind of the login's server: what serves its calls.
func (c Connection) Kind() catalog.Kind { return c.kind }

// ConnectInput asks for a login of a server at a scope.
type ConnectInput struct {
	ServerID   string       `json:"server_id"`
	Slug       string       `json:"slug"`
	OwnerScope grants.Scope `json:"owner_scope"`
	OwnerID    string       `json:"owner_id"`
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

// fromRow is the API's view of a stored login.
func fromRow(r connstore.Connection) Connection {
	c := Connection{ID: r.ID.String(), ServerID: r.Server.ID.String(), ServerSlug: r.Server.Slug, ServerName: r.Server.Name,
		OwnerScope: grants.Scope(r.OwnerScope), OwnerID: r.OwnerID, Status: r.Status, AccountHint: r.AccountHint,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	c.owner = grants.PlaceOf(r)
	c.kind = r.Server.Kind
	return c
}

// LoadConnection reads a connection without a visibility check.
func LoadConnection(ctx context.Context, db store.DB, id string) (Connection, error) {
	cid, err := connstore.ParseID(id)
	if err != nil {
		return Connection{}, err
	}
	r, err := connstore.Get(ctx, db, cid)
	if err != nil {
		return Connection{}, err
	}
	return fromRow(r), nil
}

func canSeeConn(p access.Principal, c Connection) bool {
	return c.OwnerScope == grants.ScopePlatform || p.CanSeeOrg(c.owner.OrgID)
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
func ListConnections(ctx context.Context, db store.DB, p access.Principal, ownerScope grants.Scope, ownerID string) ([]Connection, error) {
	if ownerScope != "" {
		var probs validation.Problems
		grants.CheckScopeInput(&probs, "owner_scope", "owner_id", ownerScope, ownerID)
		if err := probs.Err(); err != nil {
			return nil, err
		}
		if _, err := grants.VisiblePlace(ctx, db, p, ownerScope, ownerID); err != nil {
			return nil, err
		}
	} else if ownerID != "" {
		return nil, &validation.Error{Problems: []validation.Problem{{Field: "owner_scope", Message: "is required with owner_id"}}}
	}
	rows, err := connstore.List(ctx, db, string(ownerScope), ownerID)
	if err != nil {
		return nil, err
	}
	out := []Connection{}
	for _, r := range rows {
		if c := fromRow(r); canSeeConn(p, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// Connect creates a pending login of a server at a scope, or returns the
// pending or disconnected one already there so it can be retried. A connected
// login at the same scope is a conflict. created reports a new row.
func Connect(ctx context.Context, db store.DB, p access.Principal, integ *integrations.Registry, in ConnectInput) (Connection, bool, error) {
	r, created, err := ConnectRow(ctx, db, p, integ, in)
	if err != nil {
		return Connection{}, false, err
	}
	return fromRow(r), created, nil
}

// ConnectRow is Connect answering the login's row, which the connect
// service passes along instead of reading it again.
func ConnectRow(ctx context.Context, db store.DB, p access.Principal, integ *integrations.Registry, in ConnectInput) (c connstore.Connection, created bool, err error) {
	var probs validation.Problems
	probs.Check(in.ServerID != "" || in.Slug != "", "server_id", "server_id or slug is required")
	grants.CheckScopeInput(&probs, "owner_scope", "owner_id", in.OwnerScope, in.OwnerID)
	if err := probs.Err(); err != nil {
		return c, false, err
	}
	if in.OwnerScope == grants.ScopePlatform {
		return c, false, fmt.Errorf("%w; connect this server at an organisation, guild or agent scope instead", ErrPlatformReserved)
	}
	owner, err := grants.VisiblePlace(ctx, db, p, in.OwnerScope, in.OwnerID)
	if err != nil {
		return c, false, err
	}
	key, field := in.ServerID, "server_id"
	if key == "" {
		key, field = in.Slug, "slug"
	}
	srv, err := grants.GetServer(ctx, db, integ, key)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !srv.Published) {
		return c, false, &validation.Error{Problems: []validation.Problem{{Field: field,
			Message: fmt.Sprintf("%q names no published catalog server (GET /api/mcp/servers lists them)", key)}}}
	}
	if err != nil {
		return c, false, err
	}
	if srv.OAuthSetupState == grants.SetupUnsupported {
		return c, false, &ErrNotSetUp{Server: srv.Name, Missing: srv.MissingVariables}
	}
	var ownerArg *string
	if id := owner.ID(); id != "" {
		ownerArg = &id
	}
	id, status, err := connstore.FindForOwner(ctx, db, srv.ID, string(in.OwnerScope), ownerArg)
	switch {
	case err == nil && status == StatusConnected:
		return c, false, store.ErrConflict
	case err == nil:
		err = connstore.Touch(ctx, db, id)
	case errors.Is(err, store.ErrNotFound):
		created = true
		id, err = connstore.Insert(ctx, db, srv.ID, string(in.OwnerScope), ownerArg)
	}
	if err != nil {
		return c, false, err
	}
	c, err = connstore.Get(ctx, db, id)
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
	if c.OwnerScope == grants.ScopePlatform {
		return fmt.Errorf("%w; the box's platform login %s stays as it is", ErrPlatformReserved, c.ID)
	}
	cid, err := connstore.ParseID(c.ID)
	if err != nil {
		return err
	}
	return connstore.Delete(ctx, db, cid)
}

// MarkConnected records a successful login: status connected, the account
// hint, and the enabled mcp binding (with this connection) at the owner's scope.
func MarkConnected(ctx context.Context, db store.DB, connectionID, accountHint string) error {
	cid, err := connstore.ParseID(connectionID)
	if err != nil {
		return err
	}
	r, err := connstore.Get(ctx, db, cid)
	if err != nil {
		return err
	}
	return MarkRowConnected(ctx, db, r, accountHint)
}

// MarkRowConnected is MarkConnected of a login whose row the caller loaded.
func MarkRowConnected(ctx context.Context, db store.DB, r connstore.Connection, accountHint string) error {
	if err := connstore.SetConnected(ctx, db, r.ID, accountHint); err != nil {
		return err
	}
	return grants.BindLogin(ctx, db, r)
}

// MarkDisconnected records a login that no longer works; its bindings stay.
func MarkDisconnected(ctx context.Context, db store.DB, connectionID string) error {
	id, err := connstore.ParseID(connectionID)
	if err != nil {
		return err
	}
	return connstore.SetDisconnected(ctx, db, id)
}

// ConnectionsUnder lists the logins that deleting a place removes with it:
// those it owns and, for an organisation or a guild, those of its guilds and
// agents (the owner triggers of migration 004 cascade them). Read in the
// deleting transaction, so the caller can close their sessions and have
// every replica forget them once the delete has committed.
func ConnectionsUnder(ctx context.Context, db store.DB, scope grants.Scope, id string) ([]string, error) {
	return connstore.IDsUnder(ctx, db, string(scope), id)
}

// ConnectionsOfServer lists the logins of a catalog server (by id or slug),
// which deleting the server removes with it.
func ConnectionsOfServer(ctx context.Context, db store.DB, idOrSlug string) ([]string, error) {
	return connstore.IDsOfServer(ctx, db, idOrSlug)
}

// ConnectionOf is the API's view of a login row the caller loaded.
func ConnectionOf(r connstore.Connection) Connection { return fromRow(r) }
