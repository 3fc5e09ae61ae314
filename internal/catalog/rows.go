package catalog

import (
	"context"

	"github.com/guilds/guilds/internal/store"
)

// AdapterRow is a catalog row served by a local adapter.
type AdapterRow struct {
	ID, Slug, URL string
	Published     bool
}

// ServedBy lists the adapter rows whose config names an adapter
// (config.adapter, read through ParseConfig), by slug.
func ServedBy(ctx context.Context, db store.DB, adapter string) ([]AdapterRow, error) {
	rows, err := db.Query(ctx, `SELECT id::text, slug, url, published, config FROM mcp_servers WHERE kind = $1 ORDER BY slug`, KindAdapter)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	var out []AdapterRow
	for rows.Next() {
		var r AdapterRow
		var cfg []byte
		if err := rows.Scan(&r.ID, &r.Slug, &r.URL, &r.Published, &cfg); err != nil {
			return nil, err
		}
		if c, _ := ParseConfig(cfg); c.Adapter == adapter { // lenient: a bad config names no adapter
			out = append(out, r)
		}
	}
	return out, rows.Err()
}
