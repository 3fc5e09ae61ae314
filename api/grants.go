package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
)

// grantRoutes serve the connector catalog, connections, bindings and the Tools views.
func (s *Server) grantRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/mcp/servers", Tag: "catalog", Summary: "List the published connector servers",
			Reply: []grants.Server{}, Handle: s.listPublishedServers},
		{Method: "GET", Path: "/api/admin/mcp/servers", Tag: "catalog", Admin: true, Summary: "List every catalog server",
			Reply: []grants.Server{}, Handle: s.adminListServers},
		{Method: "GET", Path: "/api/admin/mcp/servers/:id", Tag: "catalog", Admin: true, Summary: "Get a catalog server",
			Reply: grants.Server{}, Handle: s.adminGetServer},
		{Method: "POST", Path: "/api/admin/mcp/servers", Tag: "catalog", Admin: true, Summary: "Add a catalog server",
			Body: grants.ServerInput{}, Reply: grants.Server{}, Status: 201, Handle: s.adminCreateServer},
		{Method: "PATCH", Path: "/api/admin/mcp/servers/:id", Tag: "catalog", Admin: true,
			Summary: "Change a catalog server (it then keeps the admin's copy across reseeds)",
			Body:    grants.ServerInput{}, Reply: grants.Server{}, Handle: s.adminUpdateServer},
		{Method: "DELETE", Path: "/api/admin/mcp/servers/:id", Tag: "catalog", Admin: true,
			Summary: "Delete a catalog server with its connections and bindings", Status: 204,
			Handle: s.deleteAndForget(connections.ConnectionsOfServer, adminDeleteServer), NoTx: true},

		{Method: "POST", Path: "/api/mcp/connections", Tag: "connections",
			Summary: "Create a pending login of a server at a scope, or retry a pending or disconnected one",
			Body:    connections.ConnectInput{}, Reply: connections.Connection{}, Status: 201, Handle: s.createConnection},
		{Method: "GET", Path: "/api/mcp/connections", Tag: "connections", Summary: "List the logins you can see (owner_scope, owner_id filter)",
			Reply: []connections.Connection{}, Handle: listConnections},
		{Method: "GET", Path: "/api/mcp/connections/:id", Tag: "connections", Summary: "Get a login's metadata",
			Reply: connections.Connection{}, Handle: getConnection},
		{Method: "DELETE", Path: "/api/mcp/connections/:id", Tag: "connections", Summary: "Delete a login and the bindings that use it",
			Status: 204, Handle: s.stoppingGitHubSandboxes(s.deleteAndForget(theLogin, s.deleteConnection)), NoTx: true},

		{Method: "GET", Path: "/api/bindings", Tag: "bindings", Summary: "List the bindings written at one scope (scope, scope_id)",
			Reply: []grants.Binding{}, Handle: listBindings},
		{Method: "PUT", Path: "/api/bindings", Tag: "bindings", Summary: "Turn a catalog item on or off at a scope; turning on a server that needs no login lists its tools and makes its login at that scope first",
			Body: grants.BindingInput{}, Reply: grants.Binding{}, Handle: s.putBinding, NoTx: true},
		{Method: "DELETE", Path: "/api/bindings", Tag: "bindings", Summary: "Remove a scope's binding so it inherits again",
			Body: grants.BindingInput{}, Status: 204, Handle: s.deleteBinding},

		{Method: "GET", Path: "/api/orgs/:id/tools", Tag: "tools", Summary: "The Tools view of an organisation",
			Reply: grants.ToolsView{}, Handle: s.toolsView(grants.ScopeOrganisation)},
		{Method: "GET", Path: "/api/guilds/:id/tools", Tag: "tools", Summary: "The Tools view of a guild",
			Reply: grants.ToolsView{}, Handle: s.toolsView(grants.ScopeGuild)},
		{Method: "GET", Path: "/api/agents/:id/tools", Tag: "tools", Summary: "The Tools view of an agent",
			Reply: grants.ToolsView{}, Handle: s.toolsView(grants.ScopeAgent)},
		{Method: "GET", Path: "/api/agents/:id/offered-tools", Tag: "tools",
			Summary: "What a run of the agent would be offered now (trigger=direct|group|schedule)",
			Reply:   grants.Offer{}, Handle: s.offeredTools},
	}
}

func (s *Server) grants() *grants.Service { return s.offers }

func (s *Server) listPublishedServers(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	out, err := grants.ListServers(ctx, db, s.Integrations, true)
	return http.StatusOK, out, err
}

func (s *Server) adminListServers(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	out, err := grants.ListServers(ctx, db, s.Integrations, false)
	return http.StatusOK, out, err
}

func (s *Server) adminGetServer(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	out, err := grants.GetServer(ctx, db, s.Integrations, c.Param("id"))
	return http.StatusOK, out, err
}

func (s *Server) adminCreateServer(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	var in grants.ServerInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := grants.CreateServer(ctx, db, s.Integrations, in, s.checkCatalogURL, s.sealCatalogSecrets)
	return http.StatusCreated, out, err
}

func (s *Server) adminUpdateServer(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	var in grants.ServerInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := grants.UpdateServer(ctx, db, s.Integrations, c.Param("id"), in, s.checkCatalogURL, s.sealCatalogSecrets)
	return http.StatusOK, out, err
}

// checkCatalogURL applies the outbound URL policy to a URL the admin writes
// into the catalog, so a typo or an internal address is refused on save
// rather than dialled at the first connect.
func (s *Server) checkCatalogURL(raw string) error {
	_, err := s.URLPolicy.Check(raw)
	return err
}

// sealCatalogSecrets seals the OAuth client secrets an admin writes into
// the catalog; without a keyring a secret is refused rather than kept clear.
func (s *Server) sealCatalogSecrets(slug string, config json.RawMessage) (json.RawMessage, error) {
	return connectors.SealCatalogSecrets(s.MCP.Keyring, slug, config)
}

func adminDeleteServer(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	return http.StatusNoContent, nil, grants.DeleteServer(ctx, db, c.Param("id"))
}

func (s *Server) createConnection(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in connections.ConnectInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, created, err := connections.Connect(ctx, db, p, s.Integrations, in)
	if errors.Is(err, store.ErrConflict) {
		return 0, nil, &Error{Status: http.StatusConflict, Code: "conflict", Message: "a connected login of this server already exists at this scope"}
	}
	if !created {
		return http.StatusOK, out, err
	}
	return http.StatusCreated, out, err
}

func listConnections(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := connections.ListConnections(ctx, db, p, grants.Scope(c.Query("owner_scope")), c.Query("owner_id"))
	return http.StatusOK, out, err
}

func getConnection(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := connections.GetConnection(ctx, db, p, c.Param("id"))
	return http.StatusOK, out, err
}

// deleteConnection removes a login with its bindings; deleteAndForget closes
// its MCP session and has every replica drop its cached credential after
// the commit.
func (s *Server) deleteConnection(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	conn, err := connections.GetConnection(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	if err := s.connectService().Delete(ctx, db, p, conn.ID); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, recordChange(ctx, db, p, conn.Owner(), audit.Event{Action: audit.ActionDisconnect,
		Tool: conn.ServerSlug, Kind: "login", LoginScope: string(conn.OwnerScope), AccountHint: conn.AccountHint, Outcome: "deleted"})
}

func listBindings(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := grants.ListBindings(ctx, db, p, grants.Scope(c.Query("scope")), c.Query("scope_id"))
	return http.StatusOK, out, err
}

func (s *Server) putBinding(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in grants.BindingInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if err := s.openLoginFor(ctx, p, &in); err != nil {
		return 0, nil, err
	}
	var out grants.Binding
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if out, err = s.offers.PutBinding(ctx, tx, p, in); err != nil {
			return err
		}
		if err := s.auditBinding(ctx, tx, p, out.Scope, out.ScopeID, out.CatalogKind, out.CatalogID, out.ConnectionID, onOff(out.Enabled)); err != nil {
			return err
		}
		// Checked on the written state, in the same transaction: a refusal
		// rolls the binding back.
		return s.checkPlatformCeiling(ctx, tx, p, out)
	})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, out, nil
}

// openLoginFor gives a server that needs no login, turned on where no login
// serves it, its login at that scope first (ADR 0616): the connect service
// lists its tools with no credential and marks the login connected and
// bound, or the turn-on is refused with why, and nothing is written.
func (s *Server) openLoginFor(ctx context.Context, p access.Principal, in *grants.BindingInput) error {
	plan, err := connections.PlanOpenLogin(ctx, s.db(), p, *in)
	switch {
	case err != nil:
		return err
	case plan.Bind != "":
		in.ConnectionID = &plan.Bind
	case plan.Connect != nil:
		if s.MCP.Engine == nil || !s.MCP.Engine.InUse() {
			return notConfigured()
		}
		out, err := s.connectService().Connect(ctx, p, connections.Request{Login: *plan.Connect})
		if err != nil {
			return connectError(err)
		}
		in.ConnectionID = &out.Connection.ID
	}
	return nil
}

// checkPlatformCeiling applies ADR 0302: a platform login acts with the
// box's own credential, which an operator may use only as far as the
// instance admin switched it on at the platform scope. Where the written
// binding makes a platform login serve its server, every tool on there must
// be on at the platform scope too.
func (s *Server) checkPlatformCeiling(ctx context.Context, db store.DB, p access.Principal, b grants.Binding) error {
	if p.Admin || !b.Enabled || b.Scope == grants.ScopePlatform {
		return nil
	}
	if b.CatalogKind != grants.KindMCP && b.CatalogKind != grants.KindMCPTool {
		return nil
	}
	here, err := s.grants().View(ctx, db, p, b.Scope, b.ScopeID)
	if err != nil {
		return err
	}
	platform, err := s.grants().View(ctx, db, p, grants.ScopePlatform, "")
	if err != nil {
		return err
	}
	for _, sv := range here.Servers {
		if sv.Slug != b.ServerSlug || !sv.Enabled || sv.Login == nil || sv.Login.OwnerScope != grants.ScopePlatform {
			continue
		}
		granted := map[string]bool{}
		for _, ps := range platform.Servers {
			if ps.ID == sv.ID && ps.Enabled {
				for _, t := range ps.Tools {
					granted[t.Name] = t.Enabled
				}
			}
		}
		for _, t := range sv.Tools {
			if t.Enabled && !granted[t.Name] {
				return &Error{Status: http.StatusForbidden, Code: "platform_grant",
					Message: fmt.Sprintf("%s would act with the box's own %s login, which the instance admin has not switched on at the platform scope; connect a login of your own at this scope to use it", t.Name, sv.Slug)}
			}
		}
	}
	return nil
}

func (s *Server) deleteBinding(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in grants.BindingInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if err := s.offers.DeleteBinding(ctx, db, p, in); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, s.auditBinding(ctx, db, p, in.Scope, in.ScopeID, in.CatalogKind, in.CatalogID, "", "inherit")
}

// auditBinding records a switch an operator wrote (or removed) at a scope.
func (s *Server) auditBinding(ctx context.Context, db store.DB, p access.Principal, scope grants.Scope, scopeID, kind, item, conn, to string) error {
	at, err := grants.LoadPlace(ctx, db, scope, scopeID)
	if err != nil {
		return err
	}
	return recordChange(ctx, db, p, at, audit.Event{Action: audit.ActionBinding, Tool: item, Kind: kind, ConnectionID: conn, Outcome: to})
}

func (s *Server) toolsView(scope grants.Scope) handler {
	return func(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
		out, err := s.grants().View(ctx, db, p, scope, c.Param("id"))
		return http.StatusOK, out, err
	}
}

func (s *Server) offeredTools(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	trigger := grants.Trigger(c.DefaultQuery("trigger", string(grants.TriggerDirect)))
	if !trigger.Valid() {
		return 0, nil, invalidField("trigger", "must be direct, group or schedule")
	}
	if _, err := grants.LoadPlaceVisible(ctx, db, p, grants.ScopeAgent, c.Param("id")); err != nil {
		return 0, nil, err
	}
	out, err := s.grants().Offered(ctx, db, c.Param("id"), trigger)
	return http.StatusOK, out, err
}
