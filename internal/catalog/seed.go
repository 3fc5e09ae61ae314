package catalog

import (
	"context"
	"errors"
	"fmt"

	"github.com/guilds/guilds/internal/store"
)

// Seed writes manifests into the catalog, idempotently. Rows the admin edited
// or created (copy_source=admin) keep their copy and their tool list; a
// server that publishes from listings keeps the copy its sessions listed.
func Seed(ctx context.Context, db store.DB, ms []Manifest) error {
	for _, m := range ms {
		var id string
		err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config, description, limitations, setup_hint)
			VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)
			ON CONFLICT (slug) DO UPDATE SET name = EXCLUDED.name, kind = EXCLUDED.kind, transport = EXCLUDED.transport,
				url = EXCLUDED.url, auth = EXCLUDED.auth,
				config = mcp_servers.config || EXCLUDED.config, -- keeps what Connect stored (a registered client)
				description = EXCLUDED.description, limitations = EXCLUDED.limitations, setup_hint = EXCLUDED.setup_hint,
				updated_at = now()
				WHERE mcp_servers.copy_source = 'seed'
			RETURNING id`,
			m.Slug, m.Name, string(m.Kind), m.Transport, m.URL, string(m.Auth), m.Config, m.Description, m.Limitations, m.SetupHint,
		).Scan(&id)
		if errors.Is(store.Map(err), store.ErrNotFound) {
			continue // an admin row: the WHERE skipped it
		}
		if err != nil {
			return fmt.Errorf("catalog: seed server %s: %w", m.Slug, err)
		}
		if m.PublishesListing() {
			continue // its copy is what connected sessions listed
		}
		if err := ReplaceTools(ctx, db, id, m.Tools); err != nil {
			return fmt.Errorf("catalog: seed tools of %s: %w", m.Slug, err)
		}
	}
	return nil
}

// ToolColumns splits a tool copy into the columns an unnest insert takes; a
// tool without a schema gets the empty object schema.
func ToolColumns(list []Tool) (names, descs, schemas []string) {
	names, descs, schemas = make([]string, len(list)), make([]string, len(list)), make([]string, len(list))
	for i, t := range list {
		names[i], descs[i] = t.Name, t.Description
		schemas[i] = `{"type":"object"}`
		if len(t.InputSchema) > 0 {
			schemas[i] = string(t.InputSchema)
		}
	}
	return names, descs, schemas
}

// ReplaceTools replaces a server's published tool list, in order.
func ReplaceTools(ctx context.Context, db store.DB, serverID string, list []Tool) error {
	if _, err := db.Exec(ctx, `DELETE FROM mcp_catalog_tools WHERE server_id = $1`, serverID); err != nil {
		return store.Map(err)
	}
	names, descs, schemas := ToolColumns(list)
	_, err := db.Exec(ctx, `INSERT INTO mcp_catalog_tools (server_id, name, description, input_schema, position)
		SELECT $1, n, d, s::jsonb, o FROM unnest($2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS t(n, d, s, o)`,
		serverID, names, descs, schemas)
	return store.Map(err)
}
