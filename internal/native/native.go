// Package native assembles the registry of the native tools the platform
// implements, each family from its own package, wired to its grants.
package native

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/native/issues"
	"github.com/guilds/guilds/internal/native/memory"
	"github.com/guilds/guilds/internal/native/notes"
	"github.com/guilds/guilds/internal/native/records"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// Registry registers every native tool family on a new registry.
func Registry(db *pgxpool.Pool, log *slog.Logger) *tools.Registry {
	reg := tools.NewRegistry(tools.WithLogger(log))
	notes.Register(reg, notes.Deps{DB: db, Log: log, Reach: noteReach})
	records.Register(reg, records.Deps{DB: db, Log: log})
	memory.Register(reg, memory.Deps{DB: db, Log: log})
	issues.Register(reg, db)
	return reg
}

// noteReach takes a note tool's reach from the agent's artifact grants.
func noteReach(ctx context.Context, db store.DB, agentID string) (notes.Reach, error) {
	r, err := grants.ArtifactGrants(ctx, db, agentID)
	return notes.Reach(r), err
}
