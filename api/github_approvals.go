package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/store"
)

// An installation one organisation of the box holds is attached to another
// only once an instance admin approved it: reaching an installation on
// GitHub says nothing about which organisation of the box it belongs to.

func (s *Server) githubApprovals(ctx context.Context, _ *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	out, err := githubapp.ListApprovals(ctx, db)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, out, nil
}

func (s *Server) githubApprove(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	a, err := githubapp.Approve(ctx, db, c.Param("id"), p.UserID)
	if err != nil {
		return 0, nil, err
	}
	s.Log.Info("github: an instance admin approved attaching an installation", "approval", a.ID, "organisation", a.OrganisationID, "by", p.UserID)
	return http.StatusOK, a, nil
}
