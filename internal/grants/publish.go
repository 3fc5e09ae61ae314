package grants

import (
	"context"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/store"
)

// publishListing replaces the server's published copy with a listing, when
// the server publishes from listings and the admin has not taken it over.
func publishListing(ctx context.Context, db store.DB, slug, serverID string, list []ListedTool) error {
	if !catalog.PublishesListing(slug) {
		return nil
	}
	copyOf := make([]CatalogTool, len(list))
	for i, t := range list {
		copyOf[i] = CatalogTool{Name: t.Name, Description: t.Description, InputSchema: t.Schema}
	}
	names, descs, schemas := catalog.ToolColumns(copyOf)
	_, err := db.Exec(ctx, `WITH seeded AS (SELECT id FROM mcp_servers WHERE id = $1 AND copy_source = 'seed' FOR UPDATE),
		gone AS (DELETE FROM mcp_catalog_tools WHERE server_id IN (SELECT id FROM seeded) AND NOT (name = ANY($2::text[])))
		INSERT INTO mcp_catalog_tools (server_id, name, description, input_schema, position)
		SELECT s.id, n, d, sc::jsonb, o FROM seeded s, unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(n, d, sc, o)
		ON CONFLICT (server_id, name) DO UPDATE SET description = EXCLUDED.description,
			input_schema = EXCLUDED.input_schema, position = EXCLUDED.position`, serverID, names, descs, schemas)
	return store.Map(err)
}
