package grants

import (
	"context"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// What bindings need of a login: its row (internal/connstore) is passed
// whole; the login's own API view and lifecycle are internal/connections'.

// PlaceOf is the place that owns a login.
func PlaceOf(r connstore.Connection) Place {
	pl := Place{Scope: Scope(r.OwnerScope), OrgID: r.OrgID, GuildID: r.GuildID}
	if pl.Scope == ScopeAgent {
		pl.AgentID = r.OwnerID
	}
	return pl
}

// CanSee reports whether the principal may see a login: a platform login,
// or one of an organisation it can see.
func CanSee(p access.Principal, r connstore.Connection) bool {
	return Scope(r.OwnerScope) == ScopePlatform || p.CanSeeOrg(r.OrgID)
}

// BindLogin writes the enabled mcp binding of a connected login at its
// owner's place, naming the login.
func BindLogin(ctx context.Context, db store.DB, r connstore.Connection) error {
	conn, server := r.ID.String(), r.Server.ID.String()
	return upsertBinding(ctx, db, PlaceOf(r), KindMCP, server, server, true, &conn)
}

// VisiblePlace loads a place the principal can see (store.ErrNotFound
// otherwise).
func VisiblePlace(ctx context.Context, db store.DB, p access.Principal, scope Scope, id string) (Place, error) {
	return visiblePlace(ctx, db, p, scope, id)
}

// CheckScopeInput adds a problem for a missing or malformed scope and id.
func CheckScopeInput(p *validation.Problems, scopeField, idField string, scope Scope, id string) {
	checkScopeInput(p, scopeField, idField, scope, id)
}

// BindingPlace is where a binding input puts its binding, with the catalog
// server it names, as PutBinding would resolve them.
func BindingPlace(ctx context.Context, db store.DB, p access.Principal, in BindingInput) (Place, string, error) {
	t, err := resolveTarget(ctx, db, p, in, true)
	return t.place, t.serverID, err
}

// ServingLogin is the login that serves a server at a place, "" when none does.
func ServingLogin(ctx context.Context, db store.DB, pl Place, serverID string) (string, error) {
	return servingLogin(ctx, db, pl, serverID)
}
