package api

import (
	"context"
	"errors"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/workspaces/stopbus"
)

// stoppingGitHubSandboxes wraps a login's delete (a NoTx route): when the
// login is a GitHub one, every agent under its owner has its sandbox
// stopped once the delete has succeeded, so no clone, background job or
// credential helper keeps working on the disconnected installation.
func (s *Server) stoppingGitHubSandboxes(del handler) handler {
	return func(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
		agents, err := githubLoginAgents(ctx, db, p, c.Param("id"))
		if err != nil {
			return 0, nil, err
		}
		status, body, err := del(ctx, c, db, p)
		if err != nil {
			return 0, nil, err
		}
		s.sendStop(ctx, stopbus.Order{Agents: agents, Why: "GitHub disconnected"})
		return status, body, nil
	}
}

// githubLoginAgents lists the agents under a GitHub login's owner; none for
// any other login. A login the caller cannot see is left to the delete to
// refuse.
func githubLoginAgents(ctx context.Context, db store.DB, p access.Principal, id string) ([]string, error) {
	conn, err := connections.GetConnection(ctx, db, p, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	srv, err := grants.LoadServerRoute(ctx, db, conn.ServerID)
	if err != nil {
		return nil, err
	}
	if srv.Kind != catalog.KindGitHub {
		return nil, nil
	}
	switch owner := conn.Owner(); owner.Scope {
	case grants.ScopeOrganisation:
		return orgs.AgentIDsOfOrg(ctx, db, owner.OrgID)
	case grants.ScopeGuild:
		return orgs.AgentIDsOfGuild(ctx, db, owner.GuildID)
	case grants.ScopeAgent:
		return []string{owner.AgentID}, nil
	}
	return nil, nil
}
