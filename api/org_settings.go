package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/callrate"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
)

// An organisation's settings that hold back what its runs may do. Its
// operators read them; only the instance admin changes them, since they
// protect the other organisations of the box.
func (s *Server) orgSettingsRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/orgs/:id/settings", Tag: "organisations",
			Summary: "An organisation's settings: its rate of tool calls a minute (0: no limit)",
			Reply:   callrate.Settings{}, Handle: getOrgSettings},
		{Method: "PUT", Path: "/api/orgs/:id/settings", Tag: "organisations",
			Summary: "Change an organisation's settings (instance admin only); a field left out keeps its value. Workers apply a change within 5 s",
			Body:    callrate.SettingsInput{}, Reply: callrate.Settings{}, Handle: putOrgSettings},
	}
}

func getOrgSettings(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	if _, err := orgs.GetOrg(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	n, err := callrate.Get(ctx, db, c.Param("id"))
	return http.StatusOK, callrate.Settings{ToolCallsPerMinute: n}, err
}

func putOrgSettings(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	if _, err := orgs.GetOrg(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err // another organisation's is not found, as everywhere
	}
	if !p.Admin {
		return 0, nil, access.ErrForbidden
	}
	var in callrate.SettingsInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := callrate.Set(ctx, db, c.Param("id"), in)
	return http.StatusOK, out, err
}
