package connections

import (
	"context"
	"errors"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
)

// OpenLogin is what turning a server on at a scope needs first when the
// server needs no login (catalog.NeedsNoLogin) and no login serves it there
// yet: a login of its own, owned at that scope. Connect is that login to make
// (the connect service lists the server's tools and marks it connected with
// its binding); Bind is a connected login already owned there that no binding
// names any more. Both are empty when nothing is needed.
type OpenLogin struct {
	Connect *ConnectInput
	Bind    string
}

// PlanOpenLogin says what an mcp binding that turns a server on needs before
// it is written. It writes nothing; a refused input is the error PutBinding
// would answer. The platform scope gets no login of its own: its logins are
// the box's, made by the instance admin at the terminal.
func PlanOpenLogin(ctx context.Context, db store.DB, p access.Principal, in grants.BindingInput) (OpenLogin, error) {
	if in.CatalogKind != grants.KindMCP || in.Enabled == nil || !*in.Enabled || in.ConnectionID != nil || in.Scope == grants.ScopePlatform {
		return OpenLogin{}, nil
	}
	place, serverID, err := grants.BindingPlace(ctx, db, p, in)
	if err != nil {
		return OpenLogin{}, err
	}
	srv, err := grants.LoadServerRoute(ctx, db, serverID)
	if err != nil || !srv.NoLogin {
		return OpenLogin{}, err
	}
	if serving, err := grants.ServingLogin(ctx, db, place, serverID); err != nil || serving != "" {
		return OpenLogin{}, err
	}
	owner := place.ID()
	id, status, err := connstore.FindForOwner(ctx, db, serverID, string(place.Scope), &owner)
	switch {
	case err == nil && status == StatusConnected:
		return OpenLogin{Bind: id.String()}, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return OpenLogin{}, err
	}
	return OpenLogin{Connect: &ConnectInput{ServerID: serverID, OwnerScope: place.Scope, OwnerID: owner}}, nil
}
