package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/workspaces/stopbus"
)

func (s *Server) orgRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/orgs", Tag: "organisations", Summary: "List the organisations you can see",
			Reply: []orgs.Organisation{}, Handle: listOrgs},
		{Method: "POST", Path: "/api/orgs", Tag: "organisations", Summary: "Create an organisation",
			Body: orgs.OrgInput{}, Reply: orgs.Organisation{}, Status: 201, Handle: createOrg},
		{Method: "GET", Path: "/api/orgs/:id", Tag: "organisations", Summary: "Get an organisation",
			Reply: orgs.Organisation{}, Handle: getOrg},
		{Method: "PATCH", Path: "/api/orgs/:id", Tag: "organisations", Summary: "Change an organisation",
			Body: orgs.OrgInput{}, Reply: orgs.Organisation{}, Handle: updateOrg},
		{Method: "DELETE", Path: "/api/orgs/:id", Tag: "organisations", Summary: "Delete an organisation and all it holds",
			Status: 204, Handle: s.endingWorkspaces(orgs.AgentIDsOfOrg, "organisation deleted",
				s.deleteAndForget(loginsUnder(grants.ScopeOrganisation), deleteOrg)), NoTx: true},
		{Method: "GET", Path: "/api/orgs/:id/members", Tag: "organisations", Summary: "List an organisation's operators",
			Reply: []access.Member{}, Handle: listMembers},
		{Method: "PUT", Path: "/api/orgs/:id/members/:user_id", Tag: "organisations", Admin: true,
			Summary: "Make a user an operator of an organisation", Body: memberInput{}, Status: 204, Handle: putMember},
		{Method: "DELETE", Path: "/api/orgs/:id/members/:user_id", Tag: "organisations", Admin: true,
			Summary: "Remove an operator from an organisation", Status: 204, Handle: deleteMember},

		{Method: "GET", Path: "/api/orgs/:id/guilds", Tag: "guilds", Summary: "List an organisation's guilds",
			Reply: []orgs.Guild{}, Handle: listGuilds},
		{Method: "POST", Path: "/api/orgs/:id/guilds", Tag: "guilds", Summary: "Create a guild",
			Body: orgs.GuildInput{}, Reply: orgs.Guild{}, Status: 201, Handle: createGuild},
		{Method: "GET", Path: "/api/guilds/:id", Tag: "guilds", Summary: "Get a guild",
			Reply: orgs.Guild{}, Handle: getGuild},
		{Method: "PATCH", Path: "/api/guilds/:id", Tag: "guilds", Summary: "Change a guild",
			Body: orgs.GuildInput{}, Reply: orgs.Guild{}, Handle: updateGuild},
		{Method: "DELETE", Path: "/api/guilds/:id", Tag: "guilds", Summary: "Delete a guild and its agents",
			Status: 204, Handle: s.endingWorkspaces(orgs.AgentIDsOfGuild, "guild deleted",
				s.deleteAndForget(loginsUnder(grants.ScopeGuild), deleteGuild)), NoTx: true},

		{Method: "GET", Path: "/api/guilds/:id/agents", Tag: "agents", Summary: "List a guild's agents",
			Reply: []orgs.Agent{}, Handle: listAgents},
		{Method: "POST", Path: "/api/guilds/:id/agents", Tag: "agents", Summary: "Create an agent",
			Body: orgs.AgentInput{}, Reply: orgs.Agent{}, Status: 201, Handle: s.createAgent},
		{Method: "GET", Path: "/api/agents/:id", Tag: "agents", Summary: "Get an agent",
			Reply: orgs.Agent{}, Handle: getAgent},
		{Method: "PATCH", Path: "/api/agents/:id", Tag: "agents", Summary: "Change an agent",
			Body: orgs.AgentInput{}, Reply: orgs.Agent{}, Handle: s.updateAgent},
		{Method: "DELETE", Path: "/api/agents/:id", Tag: "agents", Summary: "Delete an agent",
			Status: 204, Handle: s.endingWorkspaces(theAgent, "agent deleted",
				s.deleteAndForget(loginsUnder(grants.ScopeAgent), s.withoutSchedules(deleteAgent))), NoTx: true},

		{Method: "GET", Path: "/api/users", Tag: "users", Admin: true, Summary: "List every user with their organisations and whether they are disabled",
			Reply: []access.Account{}, Handle: listUsers},
		{Method: "POST", Path: "/api/users", Tag: "users", Admin: true, Summary: "Create an operator user and mint its first API token",
			Body: userInput{}, Reply: userCreated{}, Status: 201, Handle: createUser},
	}
}

func listOrgs(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := orgs.ListOrgs(ctx, db, p)
	return http.StatusOK, out, err
}

func createOrg(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in orgs.OrgInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := orgs.CreateOrg(ctx, db, p, in)
	return http.StatusCreated, out, err
}

func getOrg(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := orgs.GetOrg(ctx, db, p, c.Param("id"))
	return http.StatusOK, out, err
}

func updateOrg(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in orgs.OrgInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := orgs.UpdateOrg(ctx, db, p, c.Param("id"), in)
	return http.StatusOK, out, err
}

func deleteOrg(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	return http.StatusNoContent, nil, orgs.DeleteOrg(ctx, db, p, c.Param("id"))
}

type memberInput struct {
	Role string `json:"role"`
}

func listMembers(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	if _, err := orgs.GetOrg(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	out, err := access.Members(ctx, db, c.Param("id"))
	return http.StatusOK, out, err
}

func putMember(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in memberInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if in.Role != access.RoleOperator {
		return 0, nil, invalidField("role", `must be "operator"`)
	}
	if _, err := orgs.GetOrg(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, access.AddMember(ctx, db, c.Param("user_id"), c.Param("id"), in.Role)
}

func deleteMember(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	return http.StatusNoContent, nil, access.RemoveMember(ctx, db, c.Param("user_id"), c.Param("id"))
}

func listGuilds(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := orgs.ListGuilds(ctx, db, p, c.Param("id"))
	return http.StatusOK, out, err
}

func createGuild(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in orgs.GuildInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := orgs.CreateGuild(ctx, db, p, c.Param("id"), in)
	return http.StatusCreated, out, err
}

func getGuild(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := orgs.GetGuild(ctx, db, p, c.Param("id"))
	return http.StatusOK, out, err
}

func updateGuild(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in orgs.GuildInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := orgs.UpdateGuild(ctx, db, p, c.Param("id"), in)
	return http.StatusOK, out, err
}

func deleteGuild(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	return http.StatusNoContent, nil, orgs.DeleteGuild(ctx, db, p, c.Param("id"))
}

func listAgents(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := orgs.ListAgents(ctx, db, p, c.Param("id"))
	return http.StatusOK, out, err
}

func (s *Server) createAgent(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in orgs.AgentInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := orgs.CreateAgent(ctx, db, p, c.Param("id"), in, s.maxAgentsPerOrg())
	return http.StatusCreated, out, err
}

func getAgent(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := orgs.GetAgent(ctx, db, p, c.Param("id"))
	return http.StatusOK, out, err
}

func (s *Server) updateAgent(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in orgs.AgentInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	before, err := orgs.GetAgent(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	out, err := orgs.UpdateAgent(ctx, db, p, c.Param("id"), in)
	if err != nil {
		return 0, nil, err
	}
	if sandboxToolsTurnedOff(before.Config, out.Config) {
		afterCommit(c, func() { s.sendStop(ctx, stopbus.Order{Agents: []string{out.ID}, Why: "sandbox tools turned off"}) })
	}
	return http.StatusOK, out, nil
}

func deleteAgent(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	return http.StatusNoContent, nil, orgs.DeleteAgent(ctx, db, p, c.Param("id"))
}

type userInput struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Admin bool   `json:"instance_admin"`
	OrgID string `json:"organisation_id"`
}

type userCreated struct {
	User  access.User `json:"user"`
	Token string      `json:"token"`
}

func listUsers(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := access.ListUsers(ctx, db)
	return http.StatusOK, out, err
}

func createUser(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in userInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if in.Name == "" {
		return 0, nil, invalidField("name", "is required")
	}
	u, err := access.CreateUser(ctx, db, in.Name, in.Email, in.Admin)
	if err != nil {
		return 0, nil, err
	}
	if in.OrgID != "" {
		if err := access.AddMember(ctx, db, u.ID, in.OrgID, access.RoleOperator); err != nil {
			return 0, nil, err
		}
	}
	tok, err := access.MintToken(ctx, db, u.ID, "created by API")
	return http.StatusCreated, userCreated{User: u, Token: tok}, err
}
