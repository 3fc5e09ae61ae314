package api

import (
	"context"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
)

// collector lists, in the deleting transaction, the logins a delete of the
// path's id removes with it.
type collector func(ctx context.Context, db store.DB, id string) ([]string, error)

// deleteAndForget wraps a delete that removes logins (its route is NoTx):
// the delete runs in a transaction of its own that first collects the
// logins it cascades and announces them (connstore.Channel), and those are
// forgotten only once it has committed.
// Published before the commit, an invalidation lets a replica reload the
// credential from the row that is still there, and keep serving it.
func (s *Server) deleteAndForget(collect collector, del handler) handler {
	return func(ctx context.Context, c *gin.Context, _ store.DB, p access.Principal) (int, any, error) {
		var gone []string
		var status int
		var body any
		err := s.inTx(ctx, func(tx pgx.Tx) error {
			var err error
			if gone, err = collect(ctx, tx, c.Param("id")); err != nil {
				return err
			}
			if status, body, err = del(ctx, c, tx, p); err != nil {
				return err
			}
			// Heard by every replica's MCP pool once the delete commits.
			return connstore.Announce(ctx, tx, gone)
		})
		if err != nil {
			return 0, nil, err
		}
		s.forgetConnections(ctx, gone)
		return status, body, nil
	}
}

// forgetConnections closes the MCP sessions of deleted logins and has every
// replica drop their cached credentials. It runs to the end even when the
// client has gone.
func (s *Server) forgetConnections(ctx context.Context, ids []string) {
	ctx = context.WithoutCancel(ctx)
	for _, id := range ids {
		if s.MCP.Pool != nil {
			s.MCP.Pool.Drop(id)
		}
		if uid, err := uuid.Parse(id); err == nil && s.MCP.Engine != nil {
			s.MCP.Engine.Forget(ctx, uid)
		}
	}
}

// loginsUnder collects the logins a place's delete cascades.
func loginsUnder(scope grants.Scope) collector {
	return func(ctx context.Context, db store.DB, id string) ([]string, error) {
		return connections.ConnectionsUnder(ctx, db, scope, id)
	}
}

// theLogin collects the one login a connection's delete removes.
func theLogin(_ context.Context, _ store.DB, id string) ([]string, error) { return []string{id}, nil }
