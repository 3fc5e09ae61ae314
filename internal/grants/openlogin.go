package grants

import (
	"context"
	"errors"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/connstore"
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
func PlanOpenLogin(ctx context.Context, db store.DB, p access.Principal, in BindingInput) (OpenLogin, error) {
	if in.CatalogKind != KindMCP || in.Enabled == nil || !*in.Enabled || in.ConnectionID != nil || in.Scope == ScopePlatform {
		return OpenLogin{}, nil
	}
	t, err := resolveTarget(ctx, db, p, in, true)
	if err != nil {
		return OpenLogin{}, err
	}
	srv, err := LoadServerRoute(ctx, db, t.serverID)
	if err != nil || !srv.NoLogin {
		return OpenLogin{}, err
	}
	if serving, err := servingLogin(ctx, db, t.place, t.serverID); err != nil || serving != "" {
		return OpenLogin{}, err
	}
	owner := t.place.ID()
	id, status, err := connstore.FindForOwner(ctx, db, t.serverID, string(t.place.Scope), &owner)
	switch {
	case err == nil && status == StatusConnected:
		return OpenLogin{Bind: id.String()}, nil
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return OpenLogin{}, err
	}
	return OpenLogin{Connect: &ConnectInput{ServerID: t.serverID, OwnerScope: t.place.Scope, OwnerID: owner}}, nil
}
