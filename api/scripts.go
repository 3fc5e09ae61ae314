package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/native/scripts"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
)

// scriptRoutes let operators list, read and delete an agent's scripts.
// Runs that already snapshotted a deleted script keep running it.
func (s *Server) scriptRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/agents/:id/scripts", Tag: "scripts", Summary: "List an agent's scripts (without their source)",
			Reply: []scripts.Script{}, Handle: listScripts},
		{Method: "GET", Path: "/api/agents/:id/scripts/:name", Tag: "scripts", Summary: "Read one of an agent's scripts with its source",
			Reply: scripts.Script{}, Handle: getScript},
		{Method: "DELETE", Path: "/api/agents/:id/scripts/:name", Tag: "scripts", Summary: "Delete one of an agent's scripts",
			Status: http.StatusNoContent, Handle: deleteScript},
	}
}

// scriptAgent loads the agent named by the path, checking visibility, and
// the script name, checked.
func scriptAgent(ctx context.Context, c *gin.Context, db store.DB, p access.Principal, withName bool) (orgs.Agent, string, error) {
	a, err := orgs.GetAgent(ctx, db, p, c.Param("id"))
	if err != nil || !withName {
		return a, "", err
	}
	name := c.Param("name")
	if err := scripts.CheckName(name); err != nil {
		var ae *artifacts.Error
		if errors.As(err, &ae) {
			return a, "", nativeError(ae)
		}
		return a, "", err
	}
	return a, name, nil
}

func listScripts(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	a, _, err := scriptAgent(ctx, c, db, p, false)
	if err != nil {
		return 0, nil, err
	}
	out, err := scripts.List(ctx, db, a.ID)
	return http.StatusOK, out, err
}

func getScript(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	a, name, err := scriptAgent(ctx, c, db, p, true)
	if err != nil {
		return 0, nil, err
	}
	out, err := scripts.Get(ctx, db, a.ID, name)
	return http.StatusOK, out, err
}

func deleteScript(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	a, name, err := scriptAgent(ctx, c, db, p, true)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, scripts.Delete(ctx, db, a.ID, name)
}
