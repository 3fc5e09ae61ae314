package grants

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// ListedTool is one tool as a connection's listing returns it.
type ListedTool struct {
	Name        string // remote name
	Description string
	Schema      json.RawMessage
	// OutputSchema is the tool's declared output schema; empty when it
	// declares none.
	OutputSchema json.RawMessage
	UIResource   string // the ui:// page the tool names (MCP Apps, docs/adr/0620), or ""
}

// ModelName is the model-facing name of a listed tool: {slug}_{name}, with
// dots (and any other character a model provider refuses) turned into "_".
func ModelName(slug, remoteName string) string {
	var b strings.Builder
	b.Grow(len(slug) + 1 + len(remoteName))
	b.WriteString(slug)
	b.WriteByte('_')
	for _, r := range remoteName {
		if r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

var defaultOffNames = map[string]map[string]bool{
	"drive": {"create_file": true, "copy_file": true},
	"opensea": {"get_instant_api_key": true, "manage_collections": true, "get_favorites": true, "manage_watchlist": true,
		"manage_profile": true, "manage_wallets": true, "manage_drops": true, "check_drop_eligibility": true, "cancel_orders": true},
	"wallet": {"send": true, "call": true, "submit": true, "swap": true, "opensea_buy": true, "opensea_list": true,
		"opensea_accept_offer": true, "opensea_collection_offer": true, "opensea_cancel_order": true, "uniswap_swap": true},
}

// DefaultOff reports whether a listed tool of a server starts Off at the
// connection owner's scope: tools that send mail, write files or spend money.
func DefaultOff(slug, remoteName string) bool {
	if slug == "gmail" {
		return strings.Contains(strings.ToLower(remoteName), "send")
	}
	return defaultOffNames[slug][remoteName]
}

// SyncListedTools stores what a connection listed, replacing its previous
// listing, and writes the default-off overlay of each risky tool the first
// time that connection lists it. An overlay written once is never written
// again, so an operator who turned the tool on keeps it on. The overlay is
// the login's own (it names the connection and goes with it), so a switch an
// operator set for an earlier login never carries over to a new one.
func SyncListedTools(ctx context.Context, db store.DB, connectionID string, list []ListedTool) error {
	cid, err := connstore.ParseID(connectionID)
	if err != nil {
		return err
	}
	r, err := connstore.Get(ctx, db, cid)
	if err != nil {
		return err
	}
	return SyncRowTools(ctx, db, r, list)
}

// SyncRowTools is SyncListedTools of a login whose row the caller loaded.
// Its writes are one transaction (a savepoint in the caller's): a listing
// that fails half-way leaves the previous one whole.
func SyncRowTools(ctx context.Context, db store.DB, r connstore.Connection, list []ListedTool) error {
	return store.InOneTx(ctx, db, func(db store.DB) error { return syncRowTools(ctx, db, r, list) })
}

// MaxListedTools is the most tools one login's listing may hold.
const MaxListedTools = 10000

func syncRowTools(ctx context.Context, db store.DB, r connstore.Connection, list []ListedTool) error {
	slug, serverID := r.Server.Slug, r.Server.ID.String()
	var err error
	var probs validation.Problems
	if len(list) > MaxListedTools {
		probs.Add("tools", "holds %d tools; at most %d of one login are kept", len(list), MaxListedTools)
		return probs.Err()
	}
	seen := map[string]bool{}
	remote := make([]string, len(list))
	names := make([]string, len(list))
	descs := make([]string, len(list))
	schemas := make([]string, len(list))
	outputs := make([]string, len(list)) // "": none, stored as NULL
	uis := make([]*string, len(list))
	var off []string
	for i, t := range list {
		probs.Check(t.Name != "" && !seen[t.Name], fmt.Sprintf("tools[%d].name", i), "must be a unique non-empty name")
		seen[t.Name] = true
		remote[i], names[i], descs[i] = t.Name, ModelName(slug, t.Name), t.Description
		if t.UIResource != "" {
			probs.Check(strings.HasPrefix(t.UIResource, "ui://") && len(t.UIResource) <= 2048, fmt.Sprintf("tools[%d].ui_resource", i),
				"must be a ui:// URI of at most 2048 bytes")
			uis[i] = &t.UIResource
		}
		schemas[i] = `{"type":"object"}`
		if len(t.Schema) > 0 {
			if !json.Valid(t.Schema) {
				probs.Add(fmt.Sprintf("tools[%d].schema", i), "is not JSON")
				continue
			}
			schemas[i] = string(t.Schema)
		}
		if len(t.OutputSchema) > 0 && string(t.OutputSchema) != "null" {
			if !json.Valid(t.OutputSchema) {
				probs.Add(fmt.Sprintf("tools[%d].output_schema", i), "is not JSON")
				continue
			}
			outputs[i] = string(t.OutputSchema)
		}
		if DefaultOff(slug, t.Name) {
			off = append(off, names[i])
		}
	}
	if err := probs.Err(); err != nil {
		return err
	}
	if _, err := db.Exec(ctx, `DELETE FROM mcp_tools WHERE connection_id = $1 AND NOT (remote_name = ANY($2::text[]))`,
		r.ID, remote); err != nil {
		return store.Map(err)
	}
	if _, err := db.Exec(ctx, `INSERT INTO mcp_tools (connection_id, remote_name, name, description, input_schema, output_schema, ui_resource_uri, listed_at)
		SELECT $1, r, n, d, s::jsonb, NULLIF(o, '')::jsonb, u, now()
		FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) AS t(r, n, d, s, o, u)
		ON CONFLICT (connection_id, remote_name) DO UPDATE SET name = EXCLUDED.name, description = EXCLUDED.description,
			input_schema = EXCLUDED.input_schema, output_schema = EXCLUDED.output_schema,
			ui_resource_uri = EXCLUDED.ui_resource_uri, listed_at = now()`,
		r.ID, remote, names, descs, schemas, outputs, uis); err != nil {
		return store.Map(err)
	}
	// Pools keep the listed output schemas; they drop them on hearing this.
	if err := connstore.Announce(ctx, db, []string{r.ID.String()}); err != nil {
		return err
	}
	if err := publishListing(ctx, db, slug, serverID, list); err != nil {
		return err
	}
	if len(off) == 0 {
		return nil
	}
	org, guild, agent := scopeColumns(PlaceOf(r))
	_, err = db.Exec(ctx, `WITH fresh AS (
			INSERT INTO binding_defaults_applied (connection_id, catalog_kind, catalog_id)
			SELECT $1, 'mcp_tool', n FROM unnest($2::text[]) AS n ON CONFLICT DO NOTHING RETURNING catalog_id)
		INSERT INTO bindings (scope, organisation_id, guild_id, agent_id, catalog_kind, catalog_id, server_id, enabled, connection_id)
		SELECT $3, $4::uuid, $5::uuid, $6::uuid, 'mcp_tool', catalog_id, $7, false, $1 FROM fresh
		ON CONFLICT DO NOTHING`, r.ID, off, r.OwnerScope, org, guild, agent, serverID)
	return store.Map(err)
}

// CatalogTools is the curated tool list the catalog publishes for a server
// (mcp_catalog_tools, in its order): what an adapter's login lists.
func CatalogTools(ctx context.Context, db store.DB, serverID string) ([]ListedTool, error) {
	rows, err := db.Query(ctx, `SELECT name, description, input_schema FROM mcp_catalog_tools
		WHERE server_id::text = $1 ORDER BY position, name`, serverID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []ListedTool{}
	for rows.Next() {
		var t ListedTool
		if err := rows.Scan(&t.Name, &t.Description, &t.Schema); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}
