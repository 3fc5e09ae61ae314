package grants

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/guilds/guilds/internal/store"
)

// ListedSchema is the input schema of an MCP tool by the name the model sees,
// as a login listed it or, failing that, as the catalog publishes it. It is
// what an approval policy's rules are checked against.
func ListedSchema(ctx context.Context, db store.DB, name string) (json.RawMessage, error) {
	var schema []byte
	err := db.QueryRow(ctx, `SELECT input_schema FROM mcp_tools WHERE name = $1 ORDER BY listed_at DESC LIMIT 1`, name).Scan(&schema)
	if errors.Is(store.Map(err), store.ErrNotFound) {
		err = db.QueryRow(ctx, `SELECT t.input_schema FROM mcp_catalog_tools t JOIN mcp_servers s ON s.id = t.server_id
			WHERE s.slug || '_' || t.name = $1 LIMIT 1`, name).Scan(&schema)
	}
	if err != nil {
		return nil, store.Map(err)
	}
	return schema, nil
}
