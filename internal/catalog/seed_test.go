package catalog_test

import (
	"context"
	"testing"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/testdb"
)

// Every embedded manifest names a known kind and auth; seeding twice keeps
// one row per slug with its tools, and an admin's row keeps its own copy.
func TestManifestsSeed(t *testing.T) {
	ms, err := catalog.Manifests()
	if err != nil || len(ms) == 0 {
		t.Fatalf("Manifests = %d, %v", len(ms), err)
	}
	for _, m := range ms {
		if !m.Kind.Valid() || !m.Auth.Valid() || m.Tools == nil {
			t.Fatalf("manifest %s: kind %q, auth %q, tools %v", m.Slug, m.Kind, m.Auth, m.Tools)
		}
	}
	ctx := context.Background()
	db := testdb.New(t)
	for range 2 {
		if err := catalog.Seed(ctx, db, ms); err != nil {
			t.Fatal(err)
		}
	}
	var rows int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM mcp_servers`).Scan(&rows); err != nil || rows != len(ms) {
		t.Fatalf("rows after two seeds: %d, %v; want %d", rows, err, len(ms))
	}
	var withTools catalog.Manifest
	for _, m := range ms {
		if len(m.Tools) > 0 && !m.PublishesListing() {
			withTools = m
			break
		}
	}
	if withTools.Slug == "" {
		t.Skip("no manifest publishes its own tools")
	}
	if _, err := db.Exec(ctx, `UPDATE mcp_servers SET copy_source = 'admin', name = 'Ours' WHERE slug = $1`, withTools.Slug); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(ctx, `DELETE FROM mcp_catalog_tools WHERE server_id = (SELECT id FROM mcp_servers WHERE slug = $1)`, withTools.Slug); err != nil {
		t.Fatal(err)
	}
	if err := catalog.Seed(ctx, db, ms); err != nil {
		t.Fatal(err)
	}
	var name string
	var tools int
	if err := db.QueryRow(ctx, `SELECT s.name, (SELECT count(*) FROM mcp_catalog_tools t WHERE t.server_id = s.id)
		FROM mcp_servers s WHERE slug = $1`, withTools.Slug).Scan(&name, &tools); err != nil || name != "Ours" || tools != 0 {
		t.Fatalf("admin row after a seed: %q with %d tools, %v", name, tools, err)
	}
}

// ServedBy finds the adapter rows whose config names the adapter, by slug,
// and no remote row that happens to name it.
func TestServedBy(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	if _, err := db.Exec(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config, published) VALUES
		('quotes_b', 'B', 'adapter', 'http', 'https://b.example', 'token', '{"adapter":"quotes"}', false),
		('quotes_a', 'A', 'adapter', 'http', 'https://a.example', 'token', '{"adapter":"quotes"}', true),
		('other', 'O', 'adapter', 'http', 'https://o.example', 'token', '{"adapter":"other"}', true),
		('remote', 'R', 'remote', 'http', 'https://r.example', 'token', '{"adapter":"quotes"}', true)`); err != nil {
		t.Fatal(err)
	}
	rows, err := catalog.ServedBy(ctx, db, "quotes")
	if err != nil || len(rows) != 2 || rows[0].Slug != "quotes_a" || !rows[0].Published || rows[1].Slug != "quotes_b" || rows[1].Published {
		t.Fatalf("ServedBy = %+v, %v", rows, err)
	}
}

// Each seeded row calls the address the spec names for it (Drive is the
// folder-confined adapter on Drive's REST API, ADR 1102), so a typo in the
// manifest cannot hide behind a count.
func TestSeededAddresses(t *testing.T) {
	want := map[string]string{
		"notion":        "https://mcp.notion.com/mcp",
		"drive":         "https://www.googleapis.com/drive/v3",
		"sentry":        "https://mcp.sentry.dev/mcp",
		"cigale":        "https://api.cigale.ai/api/v1/public/mcp",
		"opensea":       "https://mcp.opensea.io/mcp",
		"etherscan":     "https://mcp.etherscan.io/mcp",
		"github":        "https://api.github.com",
		"coingecko":     "https://pro-api.coingecko.com/api/v3",
		"pinned_prices": "https://pro-api.coingecko.com/api/v3",
		"wallet":        "https://eth-mainnet.g.alchemy.com/v2",
		"alchemy":       "https://eth-mainnet.g.alchemy.com/nft/v3",
		"x":             "https://api.x.com/2",
		"twitterapi":    "https://api.twitterapi.io",
		"qonto":         "https://thirdparty.qonto.com",
		"dexpaprika":    "https://api.dexpaprika.com",
		"gmail":         "https://gmail.googleapis.com/gmail/v1",
	}
	ms, err := catalog.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, m := range ms {
		got[m.Slug] = m.URL
	}
	for slug, url := range want {
		if got[slug] != url {
			t.Errorf("%s calls %q, want %q", slug, got[slug], url)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d seeded rows, %d expected: %v", len(got), len(want), got)
	}
}
