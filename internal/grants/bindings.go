package grants

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Catalog kinds of a binding.
const (
	KindNativeTool    = "native_tool"
	KindMCP           = "mcp"
	KindMCPTool       = "mcp_tool"
	KindArtifactGrant = "artifact_grant"
)

// Binding is one row of the grant: at a scope, a catalog item is on or off,
// and an mcp row may name the login to use from there down.
type Binding struct {
	ID           string    `json:"id"`
	Scope        Scope     `json:"scope"`
	ScopeID      string    `json:"scope_id,omitempty"`
	CatalogKind  string    `json:"catalog_kind"`
	CatalogID    string    `json:"catalog_id"`
	Enabled      bool      `json:"enabled"`
	ConnectionID string    `json:"connection_id,omitempty"`
	ServerSlug   string    `json:"server_slug,omitempty"`
	UpdatedAt    time.Time `json:"updated_at"`
}

// BindingInput is the body of PUT and DELETE /api/bindings. For mcp the
// catalog id is the server's id or slug (stored as the id); for mcp_tool it is
// the model-facing {slug}_{name}.
type BindingInput struct {
	Scope        Scope   `json:"scope"`
	ScopeID      string  `json:"scope_id"`
	CatalogKind  string  `json:"catalog_kind"`
	CatalogID    string  `json:"catalog_id"`
	Enabled      *bool   `json:"enabled"`
	ConnectionID *string `json:"connection_id"`
}

// target is a validated binding input.
type target struct {
	place     Place
	kind      string
	catalogID string
	serverID  string
	login     string // mcp_tool: the login the overlay is for, "" when none serves the scope
}

func (in BindingInput) check(put bool) error {
	var p validation.Problems
	checkScopeInput(&p, "scope", "scope_id", in.Scope, in.ScopeID)
	switch in.CatalogKind {
	case KindNativeTool, KindMCP, KindMCPTool, KindArtifactGrant:
	default:
		p.Add("catalog_kind", "must be native_tool, mcp, mcp_tool or artifact_grant")
	}
	p.Check(in.CatalogID != "", "catalog_id", "is required")
	if put {
		p.Check(in.Enabled != nil, "enabled", "is required")
	}
	if in.ConnectionID != nil && in.CatalogKind != KindMCP {
		p.Add("connection_id", "only an mcp binding carries a connection")
	}
	if in.CatalogKind == KindArtifactGrant && in.CatalogID != "" {
		p.Check(isArtifactGrant(in.CatalogID), "catalog_id", "must be read_guild, read_org, write_guild or write_org")
	}
	return p.Err()
}

// check validates in as a whole: its fields (BindingInput.check) and, for a
// native tool, the catalog, every problem listed in one error.
func (c nativeCatalog) check(in BindingInput, put bool) error {
	var p validation.Problems
	var fields *validation.Error
	if err := in.check(put); errors.As(err, &fields) {
		for _, pr := range fields.Problems {
			p.Add(pr.Field, "%s", pr.Message)
		}
	} else if err != nil {
		return err
	}
	if in.CatalogKind == KindNativeTool && in.CatalogID != "" {
		n, ok := c.lookup(in.CatalogID)
		switch {
		case !ok:
			p.Add("catalog_id", "%q is not a native tool", in.CatalogID)
		case !n.IsBinding():
			p.Add("catalog_id", "%s is not a binding: it follows the agent's %s setting", n.Name, gateWord(n.Gate))
		}
	}
	return p.Err()
}

func gateWord(g Gate) string {
	switch g {
	case GateBrowser:
		return "browser"
	case GateCoding:
		return "coding"
	}
	return "always-on"
}

func invalid(field, format string, args ...any) error {
	return &validation.Error{Problems: []validation.Problem{{Field: field, Message: fmt.Sprintf(format, args...)}}}
}

// resolveTarget validates the input against the database and the principal:
// 422 for content, 403 for the reserved platform scope, 404 for a scope the
// principal cannot see.
func resolveTarget(ctx context.Context, db store.DB, p access.Principal, in BindingInput, put bool) (target, error) {
	if err := in.check(put); err != nil {
		return target{}, err
	}
	pl, err := mutablePlace(ctx, db, p, in.Scope, in.ScopeID)
	if err != nil {
		return target{}, err
	}
	t := target{place: pl, kind: in.CatalogKind, catalogID: in.CatalogID}
	switch in.CatalogKind {
	case KindMCP:
		err := db.QueryRow(ctx, `SELECT id FROM mcp_servers WHERE id::text = $1 OR slug = $1`, in.CatalogID).Scan(&t.serverID)
		if errors.Is(store.Map(err), store.ErrNotFound) {
			return t, invalid("catalog_id", "names no catalog server")
		} else if err != nil {
			return t, err
		}
		t.catalogID = t.serverID
	case KindMCPTool:
		if t.serverID, err = listedToolServer(ctx, db, p, in.CatalogID); err != nil {
			return t, err
		}
		if t.login, err = servingLogin(ctx, db, pl, t.serverID); err != nil {
			return t, err
		}
	}
	if in.ConnectionID != nil && put {
		c, err := visibleLogin(ctx, db, p, *in.ConnectionID)
		if errors.Is(err, store.ErrNotFound) {
			return t, invalid("connection_id", "names no connection you can see")
		} else if err != nil {
			return t, err
		}
		if c.Server.ID.String() != t.serverID {
			return t, invalid("connection_id", "is a login of %s, not of this server", c.Server.Name)
		}
		if !PlaceOf(c).Contains(pl) {
			return t, invalid("connection_id", "a login owned at the %s scope cannot be bound at this %s", c.OwnerScope, pl.Scope)
		}
	}
	return t, nil
}

// servingLogin is the login that serves a server at a place, "" when none does.
func servingLogin(ctx context.Context, db store.DB, pl Place, serverID string) (string, error) {
	chain, err := loadChain(ctx, db, pl)
	if err != nil {
		return "", err
	}
	return Resolve(plainRows(chain)).Servers[serverID].ConnectionID, nil
}

// listedToolServer finds the server of a model-facing tool name listed by a
// login the principal can see, or else published in the catalog; a tool only
// another organisation's login lists is not revealed.
func listedToolServer(ctx context.Context, db store.DB, p access.Principal, name string) (string, error) {
	rows, err := connstore.ListingTool(ctx, db, name)
	if err != nil {
		return "", err
	}
	var serverID string
	for _, r := range rows {
		if CanSee(p, r) {
			serverID = r.Server.ID.String()
			break
		}
	}
	if serverID != "" {
		return serverID, nil
	}
	err = db.QueryRow(ctx, `SELECT s.id FROM mcp_catalog_tools ct JOIN mcp_servers s ON s.id = ct.server_id
		WHERE s.slug || '_' || regexp_replace(ct.name, '[^a-zA-Z0-9_-]', '_', 'g') = $1 LIMIT 1`, name).Scan(&serverID)
	if errors.Is(store.Map(err), store.ErrNotFound) {
		return "", invalid("catalog_id", "names no tool listed by a login you can see or published in the catalog")
	}
	return serverID, err
}

// PutBinding writes (creates or replaces) one binding. Without connection_id
// an mcp row keeps the login it already names, so switching a server off and
// on again does not lose it.
// A native tool is checked against the service's catalog.
func (s *Service) PutBinding(ctx context.Context, db store.DB, p access.Principal, in BindingInput) (Binding, error) {
	if err := s.native.check(in, true); err != nil {
		return Binding{}, err
	}
	t, err := resolveTarget(ctx, db, p, in, true)
	if err != nil {
		return Binding{}, err
	}
	conn := in.ConnectionID
	if t.kind == KindMCPTool && t.login != "" {
		conn = &t.login
	}
	if err := upsertBinding(ctx, db, t.place, t.kind, t.catalogID, t.serverID, *in.Enabled, conn); err != nil {
		return Binding{}, err
	}
	return getBinding(ctx, db, t)
}

// DeleteBinding removes one binding, so the scope inherits again. For a tool
// that is the overlay of the login serving the scope and one that names none.
func (s *Service) DeleteBinding(ctx context.Context, db store.DB, p access.Principal, in BindingInput) error {
	if err := s.native.check(in, false); err != nil {
		return err
	}
	t, err := resolveTarget(ctx, db, p, in, false)
	if err != nil {
		return err
	}
	tag, err := db.Exec(ctx, `DELETE FROM bindings WHERE scope = $1 AND scope_id IS NOT DISTINCT FROM $2::uuid
		AND catalog_kind = $3 AND catalog_id = $4 AND (catalog_kind <> 'mcp_tool' OR connection_id IS NULL OR connection_id = $5::uuid)`,
		string(t.place.Scope), nullable(t.place.ID()), t.kind, t.catalogID, nullable(t.login))
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// ListBindings returns the rows written at one visible scope.
func ListBindings(ctx context.Context, db store.DB, p access.Principal, scope Scope, scopeID string) ([]Binding, error) {
	var probs validation.Problems
	checkScopeInput(&probs, "scope", "scope_id", scope, scopeID)
	if err := probs.Err(); err != nil {
		return nil, err
	}
	pl, err := visiblePlace(ctx, db, p, scope, scopeID)
	if err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, bindingSelect+` WHERE b.scope = $1 AND b.scope_id IS NOT DISTINCT FROM $2::uuid
		ORDER BY b.catalog_kind, b.catalog_id`, string(pl.Scope), nullable(pl.ID()))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Binding{}
	for rows.Next() {
		b, err := scanBinding(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, rows.Err()
}

const bindingSelect = `SELECT b.id, b.scope, coalesce(b.scope_id::text, ''), b.catalog_kind, b.catalog_id, b.enabled,
	coalesce(b.connection_id::text, ''), coalesce(s.slug, ''), b.updated_at
FROM bindings b LEFT JOIN mcp_servers s ON s.id = b.server_id`

func scanBinding(row interface{ Scan(...any) error }) (Binding, error) {
	var b Binding
	err := row.Scan(&b.ID, &b.Scope, &b.ScopeID, &b.CatalogKind, &b.CatalogID, &b.Enabled, &b.ConnectionID, &b.ServerSlug, &b.UpdatedAt)
	return b, err
}

func getBinding(ctx context.Context, db store.DB, t target) (Binding, error) {
	b, err := scanBinding(db.QueryRow(ctx, bindingSelect+` WHERE b.scope = $1 AND b.scope_id IS NOT DISTINCT FROM $2::uuid
		AND b.catalog_kind = $3 AND b.catalog_id = $4
		AND (b.catalog_kind <> 'mcp_tool' OR b.connection_id IS NOT DISTINCT FROM $5::uuid)`,
		string(t.place.Scope), nullable(t.place.ID()), t.kind, t.catalogID, nullable(t.login)))
	return b, store.Map(err)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// scopeColumns returns the organisation_id, guild_id and agent_id of a binding row at a place.
func scopeColumns(pl Place) (org, guild, agent any) {
	switch pl.Scope {
	case ScopeOrganisation:
		return pl.OrgID, nil, nil
	case ScopeGuild:
		return nil, pl.GuildID, nil
	case ScopeAgent:
		return nil, nil, pl.AgentID
	}
	return nil, nil, nil
}

const bindingConflict = `ON CONFLICT (scope, coalesce(scope_id, '00000000-0000-0000-0000-000000000000'::uuid), catalog_kind, catalog_id,
	coalesce(CASE WHEN catalog_kind = 'mcp_tool' THEN connection_id END, '00000000-0000-0000-0000-000000000000'::uuid))`

func upsertBinding(ctx context.Context, db store.DB, pl Place, kind, catalogID, serverID string, enabled bool, conn *string) error {
	org, guild, agent := scopeColumns(pl)
	var connArg any
	if conn != nil {
		connArg = *conn
	}
	_, err := db.Exec(ctx, `INSERT INTO bindings (scope, organisation_id, guild_id, agent_id, catalog_kind, catalog_id,
		server_id, enabled, connection_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) `+bindingConflict+`
		DO UPDATE SET enabled = EXCLUDED.enabled, connection_id = coalesce(EXCLUDED.connection_id, bindings.connection_id),
			updated_at = now()`,
		string(pl.Scope), org, guild, agent, kind, catalogID, nullable(serverID), enabled, connArg)
	return store.Map(err)
}

// visibleLogin reads a login the principal can see (store.ErrNotFound
// otherwise).
func visibleLogin(ctx context.Context, db store.DB, p access.Principal, id string) (connstore.Connection, error) {
	cid, err := connstore.ParseID(id)
	if err != nil {
		return connstore.Connection{}, err
	}
	c, err := connstore.Get(ctx, db, cid)
	if err == nil && !CanSee(p, c) {
		return connstore.Connection{}, store.ErrNotFound
	}
	return c, err
}
