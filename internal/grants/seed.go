package grants

import (
	"context"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// Seed writes, idempotently, what grants need at boot: the connector catalog
// from the embedded manifests and the platform seed bindings of the native
// tools reg registers.
func Seed(ctx context.Context, db store.DB, reg *tools.Registry) error {
	if err := SeedCatalog(ctx, db); err != nil {
		return err
	}
	return SeedPlatformBindings(ctx, db, reg)
}

// SeedPlatformBindings turns every native tool of reg that is a binding on
// at the platform scope, once per tool: a tool seeded before is left as the
// operators made it, even deleted.
func SeedPlatformBindings(ctx context.Context, db store.DB, reg *tools.Registry) error {
	names := catalogOf(reg).bindingNames()
	_, err := db.Exec(ctx, `WITH fresh AS (
			INSERT INTO binding_defaults_applied (connection_id, catalog_kind, catalog_id)
			SELECT NULL, 'native_tool', n FROM unnest($1::text[]) AS n ON CONFLICT DO NOTHING RETURNING catalog_id)
		INSERT INTO bindings (scope, catalog_kind, catalog_id, enabled)
		SELECT 'platform', 'native_tool', catalog_id, true FROM fresh ON CONFLICT DO NOTHING`, names)
	return store.Map(err)
}
