package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/store"
)

func (s *Server) toolRefreshRoutes() []route {
	return []route{
		{Method: "POST", Path: "/api/mcp/connections/:id/tools/refresh", Tag: "connections",
			Summary: "List a connected login's tools again now and store them (the Tools view's Refresh); a failed listing keeps the stored tools",
			Reply:   []mcpTool{}, Handle: s.refreshMCPTools, NoTx: true},
	}
}

func (s *Server) refreshMCPTools(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	conn, err := connections.GetConnection(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	if s.MCP.Pool == nil || s.MCP.Adapters == nil {
		return 0, nil, notConfigured()
	}
	if conn.Status != connections.StatusConnected {
		return 0, nil, &Error{Status: http.StatusConflict, Code: "not_connected",
			Message: conn.ServerName + " is " + string(conn.Status) + ": connect it before listing its tools"}
	}
	if err := s.syncTools(ctx, conn); err != nil {
		s.Log.WarnContext(ctx, "mcp refresh: listing failed; the stored tools stay", "connection", conn.ID, "err", err)
		return 0, nil, &Error{Status: http.StatusBadGateway, Code: "listing_failed",
			Message: conn.ServerName + " could not list its tools; the stored list stays: " + err.Error()}
	}
	stored, err := mcppool.Stored(ctx, db, conn.ID)
	if err != nil {
		return 0, nil, err
	}
	out := make([]mcpTool, len(stored))
	for i, t := range stored {
		out[i] = mcpTool{Name: t.Name, RemoteName: t.RemoteName, Description: t.Description, InputSchema: t.Schema}
	}
	return http.StatusOK, out, nil
}

// syncTools lists a login's tools again and stores them, with what serves
// its catalog kind.
func (s *Server) syncTools(ctx context.Context, conn connections.Connection) error {
	if conn.Kind() == catalog.KindAdapter {
		_, err := s.MCP.Adapters.Sync(ctx, conn.ID)
		return err
	}
	_, err := s.MCP.Pool.Sync(ctx, conn.ID)
	return err
}
