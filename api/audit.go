package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
)

// auditRoutes serve the audit trail: an organisation's to its operators,
// every organisation's to the instance admin. The view and the export read
// the same filter (audit.ParseFilter), so a download holds what the view
// showed, every page of it.
func (s *Server) auditRoutes() []route {
	const filter = " (filters: guild_id, agent_id, run_id, tool, connection_id, action, outcome, from, to as RFC 3339; before and limit page)"
	return []route{
		{Method: "GET", Path: "/api/orgs/:id/audit", Tag: "audit", Summary: "The organisation's audit trail, newest first" + filter,
			Reply: []audit.Event{}, Handle: orgAudit},
		{Method: "GET", Path: "/api/orgs/:id/audit/export", Tag: "audit", Summary: "The organisation's audit trail as JSON lines, every event the filter selects" + filter,
			Raw: s.exportAudit(false)},
		{Method: "GET", Path: "/api/admin/audit", Tag: "audit", Admin: true, Summary: "The whole box's audit trail, newest first" + filter + "; organisation_id narrows it",
			Reply: []audit.Event{}, Handle: adminAudit},
		{Method: "GET", Path: "/api/admin/audit/export", Tag: "audit", Admin: true, Summary: "The whole box's audit trail as JSON lines" + filter,
			Raw: s.exportAudit(true)},
	}
}

// auditFilter is the one way a request becomes a filter: the query's fields,
// restricted to what the caller may see.
func auditFilter(c *gin.Context, p access.Principal, admin bool) (audit.Filter, error) {
	f, err := audit.ParseFilter(c.Request.URL.Query())
	if errors.Is(err, audit.ErrBadFilter) {
		return f, badRequest(err.Error())
	}
	if err != nil {
		return f, err
	}
	if admin {
		return f, nil
	}
	org := c.Param("id")
	if !p.CanSeeOrg(org) {
		return f, store.ErrNotFound
	}
	f.Orgs, f.OrganisationID = []string{org}, ""
	return f, nil
}

func orgAudit(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	f, err := auditFilter(c, p, false)
	if err != nil {
		return 0, nil, err
	}
	out, err := audit.List(ctx, db, f)
	return http.StatusOK, out, err
}

func adminAudit(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	f, err := auditFilter(c, p, true)
	if err != nil {
		return 0, nil, err
	}
	out, err := audit.List(ctx, db, f)
	return http.StatusOK, out, err
}

func (s *Server) exportAudit(admin bool) gin.HandlerFunc {
	return func(c *gin.Context) {
		p := c.MustGet(principalKey).(access.Principal)
		f, err := auditFilter(c, p, admin)
		if err != nil {
			s.fail(c, err)
			return
		}
		ctx := c.Request.Context()
		c.Header("Content-Type", "application/x-ndjson")
		c.Header("Content-Disposition", `attachment; filename="audit.jsonl"`)
		c.Status(http.StatusOK)
		if _, err := audit.Export(ctx, s.db(), f, c.Writer); err != nil {
			s.Log.WarnContext(ctx, "audit export ended early", "err", err)
		}
	}
}

// recordChange writes the audit event of an operator's change, in the
// request's transaction: where it happened (a grants place), what changed
// and to what (outcome: on, off, inherit, removed…).
func recordChange(ctx context.Context, db store.DB, p access.Principal, at grants.Place, e audit.Event) error {
	e.OrganisationID, e.GuildID, e.AgentID, e.Actor = at.OrgID, at.GuildID, at.AgentID, actor(p)
	return audit.Record(ctx, db, e)
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
