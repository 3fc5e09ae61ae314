package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
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
			Status: 204, Handle: s.deleteAndForget(loginsUnder(grants.ScopeOrganisation), deleteOrg), NoTx: true},
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
			Status: 204, Handle: s.deleteAndForget(loginsUnder(grants.ScopeGuild), deleteGuild), NoTx: true},

		{Method: "GET", Path: "/api/guilds/:id/agents", Tag: "agents", Summary: "List a guild's agents",
			Reply: []orgs.Agent{}, Handle: listAgents},
		{Method: "POST", Path: "/api/guilds/:id/agents", Tag: "agents", Summary: "Create an agent",
			Body: orgs.AgentInput{}, Reply: orgs.Agent{}, Status: 201, Handle: createAgent},
		{Method: "GET", Path: "/api/agents/:id", Tag: "agents", Summary: "Get an agent",
			Reply: orgs.Agent{}, Handle: getAgent},
		{Method: "PATCH", Path: "/api/agents/:id", Tag: "agents", Summary: "Change an agent",
			Body: orgs.AgentInput{}, Reply: orgs.Agent{}, Handle: updateAgent},
		{Method: "DELETE", Path: "/api/agents/:id", Tag: "agents", Summary: "Delete an agent",
			Status: 204, Handle: s.deleteAndForget(loginsUnder(grants.ScopeAgent), deleteAgent), NoTx: true},

		{Method: "POST", Path: "/api/users", Tag: "users", Admin: true, Summary: "Create an operator user and mint its first API token",
			Body: userInput{}, Reply: userCreated{}, Status: 201, Handle: createUser},
	}
}

func listOrgs(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := orgs.ListOrgs(c, db, p)
	return http.StatusOK, out, err
}

func createOrg(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in orgs.OrgInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := orgs.CreateOrg(c, db, p, in)
	return http.StatusCreated, out, err
}

func getOrg(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := orgs.GetOrg(c, db, p, c.Param("id"))
	return http.StatusOK, out, err
}

func updateOrg(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in orgs.OrgInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := orgs.UpdateOrg(c, db, p, c.Param("id"), in)
	return http.StatusOK, out, err
}

func deleteOrg(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	return http.StatusNoContent, nil, orgs.DeleteOrg(c, db, p, c.Param("id"))
}

type memberInput struct {
	Role string `json:"role"`
}

func listMembers(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	if _, err := orgs.GetOrg(c, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	out, err := access.Members(c, db, c.Param("id"))
	return http.StatusOK, out, err
}

func putMember(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in memberInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if in.Role != access.RoleOperator {
		return 0, nil, invalidField("role", `must be "operator"`)
	}
	if _, err := orgs.GetOrg(c, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, access.AddMember(c, db, c.Param("user_id"), c.Param("id"), in.Role)
}

func deleteMember(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	return http.StatusNoContent, nil, access.RemoveMember(c, db, c.Param("user_id"), c.Param("id"))
}

func listGuilds(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := orgs.ListGuilds(c, db, p, c.Param("id"))
	return http.StatusOK, out, err
}

func createGuild(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in orgs.GuildInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := orgs.CreateGuild(c, db, p, c.Param("id"), in)
	return http.StatusCreated, out, err
}

func getGuild(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := orgs.GetGuild(c, db, p, c.Param("id"))
	return http.StatusOK, out, err
}

func updateGuild(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in orgs.GuildInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := orgs.UpdateGuild(c, db, p, c.Param("id"), in)
	return http.StatusOK, out, err
}

func deleteGuild(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	return http.StatusNoContent, nil, orgs.DeleteGuild(c, db, p, c.Param("id"))
}

func listAgents(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := orgs.ListAgents(c, db, p, c.Param("id"))
	return http.StatusOK, out, err
}

func createAgent(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in orgs.AgentInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := orgs.CreateAgent(c, db, p, c.Param("id"), in)
	return http.StatusCreated, out, err
}

func getAgent(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	out, err := orgs.GetAgent(c, db, p, c.Param("id"))
	return http.StatusOK, out, err
}

func updateAgent(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in orgs.AgentInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := orgs.UpdateAgent(c, db, p, c.Param("id"), in)
	return http.StatusOK, out, err
}

func deleteAgent(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	return http.StatusNoContent, nil, orgs.DeleteAgent(c, db, p, c.Param("id"))
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

func createUser(c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in userInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if in.Name == "" {
		return 0, nil, invalidField("name", "is required")
	}
	u, err := access.CreateUser(c, db, in.Name, in.Email, in.Admin)
	if err != nil {
		return 0, nil, err
	}
	if in.OrgID != "" {
		if err := access.AddMember(c, db, u.ID, in.OrgID, access.RoleOperator); err != nil {
			return 0, nil, err
		}
	}
	tok, err := access.MintToken(c, db, u.ID, "created by API")
	return http.StatusCreated, userCreated{User: u, Token: tok}, err
}
