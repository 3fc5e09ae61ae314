package api

import (
	"context"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/studio"
)

// studioRoutes serve Studio, where an operator investigates an issue. Test
// (POST /api/mcp/connections/:id/call), the login's health and Resolve are
// the routes that already exist.
func (s *Server) studioRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/issues/:id/studio", Tag: "issues",
			Summary: "Studio of an issue: its run, the failing call (or ?seq=N) with its redacted arguments and result, the tool's schema, its switch chain and its login",
			Reply:   studio.View{}, Handle: getStudio},
	}
}

func getStudio(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	seq := 0
	if v := c.Query("seq"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return 0, nil, badRequest("seq must be a call's number (1 or more)")
		}
		seq = n
	}
	out, err := studio.Load(ctx, db, p, c.Param("id"), seq)
	return http.StatusOK, out, err
}
