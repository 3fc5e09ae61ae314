package grants

import (
	"context"
	"sort"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/store"
)

// Row is one binding as resolution reads it.
type Row struct {
	Scope        Scope
	Kind         string
	CatalogID    string // native tool name, artifact grant name, server id, or {slug}_{name}
	ServerID     string // mcp and mcp_tool rows
	Enabled      bool
	ConnectionID string // mcp rows: the login to use; mcp_tool rows: the login the overlay belongs to
}

// Decision is the state of one catalog item after the walk.
type Decision struct {
	// Set is false when no row of the chain mentions the item.
	Set       bool  `json:"set"`
	Enabled   bool  `json:"enabled"`
	DecidedBy Scope `json:"decided_by,omitempty"`
	// ConnectionID is the current login (mcp only) and ConnectionFrom the scope that named it.
	ConnectionID   string `json:"connection_id,omitempty"`
	ConnectionFrom Scope  `json:"connection_from,omitempty"`
}

// Resolved is the outcome of one walk of the chain.
type Resolved struct {
	Native    map[string]Decision // by tool name
	Artifacts map[string]Decision // by grant name; starts from the defaults
	Servers   map[string]Decision // by server id
	Tools     map[string]Decision // per-tool overlays by model-facing name
}

// Resolve walks rows in chain order (platform, organisation, guild, agent):
// each present row replaces enabled and, when it names one, the login; an
// absent row leaves the state as it was. A tool overlay that belongs to a
// login counts only where that login serves its server, and at one scope it
// comes after an overlay that names no login. The input order does not matter.
func Resolve(rows []Row) Resolved {
	sorted := make([]Row, len(rows))
	copy(sorted, rows)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i], sorted[j]
		if chainOrder[a.Scope] != chainOrder[b.Scope] {
			return chainOrder[a.Scope] < chainOrder[b.Scope]
		}
		return a.Kind == KindMCPTool && b.Kind == KindMCPTool && a.ConnectionID == "" && b.ConnectionID != ""
	})
	r := Resolved{
		Native:    map[string]Decision{},
		Artifacts: map[string]Decision{},
		Servers:   map[string]Decision{},
		Tools:     map[string]Decision{},
	}
	for _, a := range artifactDefaults {
		r.Artifacts[a.Name] = Decision{Enabled: a.On}
	}
	for _, row := range sorted {
		var m map[string]Decision
		key := row.CatalogID
		switch row.Kind {
		case KindNativeTool:
			m = r.Native
		case KindArtifactGrant:
			m = r.Artifacts
		case KindMCP:
			m, key = r.Servers, row.ServerID
		default:
			continue
		}
		d := m[key]
		d.Set, d.Enabled, d.DecidedBy = true, row.Enabled, row.Scope
		if row.ConnectionID != "" {
			d.ConnectionID, d.ConnectionFrom = row.ConnectionID, row.Scope
		}
		m[key] = d
	}
	// Tool overlays last: which of them count depends on the login each
	// server resolved to over the whole chain.
	for _, row := range sorted {
		if row.Kind != KindMCPTool || !overlayApplies(row, r.Servers[row.ServerID].ConnectionID) {
			continue
		}
		r.Tools[row.CatalogID] = Decision{Set: true, Enabled: row.Enabled, DecidedBy: row.Scope}
	}
	return r
}

// overlayApplies says whether a tool overlay counts where login serves its
// server: one that names no login always does, a login's own only for it.
func overlayApplies(row Row, login string) bool {
	return row.ConnectionID == "" || row.ConnectionID == login
}

// ToolState is the effective state of one listed tool: a per-tool overlay
// replaces the server grant, but never turns a tool on when its server is off.
func (r Resolved) ToolState(serverID, toolName string) (enabled bool, decidedBy Scope) {
	s := r.Servers[serverID]
	if !s.Enabled {
		return false, s.DecidedBy
	}
	if t, ok := r.Tools[toolName]; ok && t.Set {
		return t.Enabled, t.DecidedBy
	}
	return true, s.DecidedBy
}

// ArtifactReach is where an agent's note tools may read and write.
type ArtifactReach struct{ ReadGuild, ReadOrg, WriteGuild, WriteOrg bool }

// Reach turns the artifact decisions into an ArtifactReach.
func (r Resolved) Reach() ArtifactReach {
	return ArtifactReach{
		ReadGuild:  r.Artifacts["read_guild"].Enabled,
		ReadOrg:    r.Artifacts["read_org"].Enabled,
		WriteGuild: r.Artifacts["write_guild"].Enabled,
		WriteOrg:   r.Artifacts["write_org"].Enabled,
	}
}

// chainRow is a Row with the copy of its server, for offers and views.
type chainRow struct {
	Row
	ServerSlug, ServerName string
	ServerKind             catalog.Kind
}

// loadChain reads every binding of the platform and the given scope ids in one query.
func loadChain(ctx context.Context, db store.DB, pl Place) ([]chainRow, error) {
	ids := make([]string, 0, 3)
	for _, id := range []string{pl.OrgID, pl.GuildID, pl.AgentID} {
		if id != "" {
			ids = append(ids, id)
		}
	}
	rows, err := db.Query(ctx, `SELECT b.scope, b.catalog_kind, b.catalog_id, coalesce(b.server_id::text, ''), b.enabled,
		coalesce(b.connection_id::text, ''), coalesce(s.slug, ''), coalesce(s.name, ''), coalesce(s.kind, '')
		FROM bindings b LEFT JOIN mcp_servers s ON s.id = b.server_id
		WHERE b.scope = 'platform' OR b.scope_id = ANY($1::uuid[])`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []chainRow
	for rows.Next() {
		var r chainRow
		if err := rows.Scan(&r.Scope, &r.Kind, &r.CatalogID, &r.ServerID, &r.Enabled, &r.ConnectionID,
			&r.ServerSlug, &r.ServerName, &r.ServerKind); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func plainRows(rows []chainRow) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		out[i] = r.Row
	}
	return out
}
