package api

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/usage"
	"github.com/guilds/guilds/internal/validation"
)

// runListItem is a run as a run list shows it, with its model tokens.
type runListItem struct {
	runs.Summary
	usage.Tokens
}

const runListQuery = " (?status=&trigger=&agent_id=&since=&until= RFC 3339, ?before=<cursor of the last run shown>&limit=)"

// runFilter reads a run list's query; the scope is set by the caller.
func runFilter(c *gin.Context) (runs.Filter, error) {
	q := c.Request.URL.Query()
	f := runs.Filter{Status: q.Get("status"), Trigger: q.Get("trigger"), Before: q.Get("before")}
	var probs validation.Problems
	for field, dst := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		if v := q.Get(field); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			probs.Check(err == nil, field, "must be a time such as 2026-12-05T09:00:00Z")
			*dst = t
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		probs.Check(err == nil && n >= 1, "limit", "must be from 1 to %d", runs.MaxPage)
		f.Limit = n
	}
	if err := probs.Err(); err != nil {
		return f, err
	}
	return f, f.Check()
}

func listRunsOf(ctx context.Context, db store.DB, f runs.Filter) (int, any, error) {
	page, err := runs.List(ctx, db, f)
	if err != nil {
		return 0, nil, err
	}
	ids := make([]string, len(page))
	for i := range page {
		ids[i] = page[i].ID
	}
	tokens, err := usage.TokensOf(ctx, db, ids)
	if err != nil {
		return 0, nil, err
	}
	out := make([]runListItem, len(page))
	for i := range page {
		out[i] = runListItem{Summary: page[i], Tokens: tokens[page[i].ID]}
	}
	return http.StatusOK, out, nil
}

func listRuns(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	if _, err := orgs.GetAgent(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	f, err := runFilter(c)
	if err != nil {
		return 0, nil, err
	}
	f.AgentID = c.Param("id")
	return listRunsOf(ctx, db, f)
}

// agentInScope narrows a guild's or organisation's list to one of its agents.
func agentInScope(ctx context.Context, c *gin.Context, db store.DB, p access.Principal, f *runs.Filter) error {
	id := c.Query("agent_id")
	if id == "" {
		return nil
	}
	a, err := orgs.GetAgent(ctx, db, p, id)
	if err != nil || (f.GuildID != "" && a.GuildID != f.GuildID) || (f.OrganisationID != "" && a.OrganisationID != f.OrganisationID) {
		var probs validation.Problems
		probs.Add("agent_id", "must name an agent of this list's guild or organisation")
		return probs.Err()
	}
	f.AgentID = id
	return nil
}

func listGuildRuns(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	if _, err := orgs.GetGuild(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	f, err := runFilter(c)
	if err != nil {
		return 0, nil, err
	}
	f.GuildID = c.Param("id")
	if err := agentInScope(ctx, c, db, p, &f); err != nil {
		return 0, nil, err
	}
	return listRunsOf(ctx, db, f)
}

func listOrgRuns(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	if _, err := orgs.GetOrg(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	f, err := runFilter(c)
	if err != nil {
		return 0, nil, err
	}
	f.OrganisationID = c.Param("id")
	if err := agentInScope(ctx, c, db, p, &f); err != nil {
		return 0, nil, err
	}
	return listRunsOf(ctx, db, f)
}
