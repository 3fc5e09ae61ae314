package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/builder"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/remote"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// builderRoutes serve the guild builder: the coach drafts, the operator
// accepts, and Accept creates everything in the request's one transaction.
func (s *Server) builderRoutes() []route {
	return []route{
		{Method: "POST", Path: "/api/orgs/:id/builder/coach", Tag: "builder",
			Summary: "Ask the coach to draft a guild for a job: agents, prompts and switches of published servers and tools; nothing is created",
			Body:    coachInput{}, Reply: builder.Advice{}, Handle: s.coachGuild, NoTx: true},
		{Method: "POST", Path: "/api/orgs/:id/builder/accept", Tag: "builder",
			Summary: "Create a drafted guild with its agents, prompts and switches in one step, or nothing",
			Body:    builder.Proposal{}, Reply: builder.Created{}, Status: 201, Handle: s.acceptGuild},
	}
}

type coachInput struct {
	Job string `json:"job"`
}

func (s *Server) coachGuild(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in coachInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	coach := builder.Coach{Models: s.models(), Integ: s.Integrations, Search: s.notionSearch(p)}
	out, err := coach.Propose(ctx, db, p, c.Param("id"), in.Job)
	var none *builder.ErrNoProposal
	var me *models.Error
	switch {
	case errors.As(err, &none):
		return 0, nil, &Error{Status: http.StatusUnprocessableEntity, Code: "no_proposal", Message: none.Error()}
	case errors.As(err, &me):
		return 0, nil, &Error{Status: http.StatusBadGateway, Code: "model_failed", Message: "the coach's model failed: " + me.Error()}
	}
	return http.StatusOK, out, err
}

func (s *Server) acceptGuild(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in builder.Proposal
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	out, err := builder.Accept(ctx, db, p, s.offers, s.Integrations, c.Param("id"), in, s.maxAgentsPerOrg())
	if err != nil {
		return 0, nil, err
	}
	for _, b := range out.Bindings {
		if err := s.auditBinding(ctx, db, p, b.Scope, b.ScopeID, b.CatalogKind, b.CatalogID, b.ConnectionID, onOff(b.Enabled)); err != nil {
			return 0, nil, err
		}
		if err := s.checkPlatformCeiling(ctx, db, p, b); err != nil {
			return 0, nil, err
		}
	}
	return http.StatusCreated, out, nil
}

// notionSearch searches the organisation's connected Notion login with its
// listed search tool, on the path a run's call takes (internal/remote), the
// result redacted against the login's credential before the coach reads it.
func (s *Server) notionSearch(p access.Principal) builder.Searcher {
	return func(ctx context.Context, orgID, query string) (string, error) {
		db := s.db()
		logins, err := connections.ListConnections(ctx, db, p, grants.ScopeOrganisation, orgID)
		if err != nil {
			return "", err
		}
		var conn *connections.Connection
		for i := range logins {
			if logins[i].ServerSlug == "notion" && logins[i].Status == connections.StatusConnected {
				conn = &logins[i]
			}
		}
		if conn == nil || s.MCP.Engine == nil || s.MCP.Pool == nil {
			return "", builder.ErrNoNotion
		}
		listed, err := mcppool.Stored(ctx, db, conn.ID)
		if err != nil {
			return "", err
		}
		var tool *mcppool.Tool
		for i := range listed {
			name := listed[i].RemoteName
			if name == "notion-search" || name == "search" || (tool == nil && strings.Contains(name, "search")) {
				tool = &listed[i]
			}
		}
		if tool == nil {
			return "", errors.New("the organisation's Notion login lists no search tool")
		}
		secrets, err := s.secretsOf(ctx, *conn)
		if err != nil {
			return "", errors.New("the Notion login's credential cannot be loaded to redact its answer, so it was not searched")
		}
		args, _ := json.Marshal(map[string]string{"query": query})
		// A failed call answers its stamped ERROR result, redacted like any
		// other: the coach reads that, never the raw error.
		out, _ := remote.Call(ctx, s.remoteCallers(), remote.Tool{Kind: conn.Kind(), ConnectionID: conn.ID, RemoteName: tool.RemoteName, Schema: tool.Schema}, args,
			remote.Options{Redactor: tools.NewRedactor(secrets, s.Log), NoTrailer: true, Log: s.Log})
		return out, nil
	}
}
