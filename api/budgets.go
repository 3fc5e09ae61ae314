package api

import (
	"context"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/budgets"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/usage"
)

// Budgets and the model price table (docs/budgets.md). An organisation's
// operators read and set the limits of the organisation, its guilds and its
// agents; the price table is the instance admin's.
func (s *Server) budgetRoutes() []route {
	limits := " (tool calls and model tokens per UTC day, money per UTC month; null is no limit)"
	return []route{
		{Method: "GET", Path: "/api/orgs/:id/budgets", Tag: "budgets", Summary: "The organisation's limits and its use against them" + limits,
			Reply: budgets.Budget{}, Handle: budgetHandler(budgets.ScopeOrganisation, false)},
		{Method: "PUT", Path: "/api/orgs/:id/budgets", Tag: "budgets", Summary: "Set the organisation's limits" + limits,
			Body: budgets.Limits{}, Reply: budgets.Budget{}, Handle: budgetHandler(budgets.ScopeOrganisation, true)},
		{Method: "GET", Path: "/api/guilds/:id/budgets", Tag: "budgets", Summary: "The guild's limits and its use against them" + limits,
			Reply: budgets.Budget{}, Handle: budgetHandler(budgets.ScopeGuild, false)},
		{Method: "PUT", Path: "/api/guilds/:id/budgets", Tag: "budgets", Summary: "Set the guild's limits" + limits,
			Body: budgets.Limits{}, Reply: budgets.Budget{}, Handle: budgetHandler(budgets.ScopeGuild, true)},
		{Method: "GET", Path: "/api/agents/:id/budgets", Tag: "budgets", Summary: "The agent's limits and its use against them" + limits,
			Reply: budgets.Budget{}, Handle: budgetHandler(budgets.ScopeAgent, false)},
		{Method: "PUT", Path: "/api/agents/:id/budgets", Tag: "budgets", Summary: "Set the agent's limits" + limits,
			Body: budgets.Limits{}, Reply: budgets.Budget{}, Handle: budgetHandler(budgets.ScopeAgent, true)},

		{Method: "GET", Path: "/api/admin/prices", Tag: "budgets", Admin: true, Summary: "The model price table (per provider and model, per million tokens)",
			Reply: []usage.Price{}, Handle: listPrices},
		{Method: "PUT", Path: "/api/admin/prices", Tag: "budgets", Admin: true, Summary: "Set one model's price; later turns are costed with it",
			Body: usage.Price{}, Reply: usage.Price{}, Handle: putPrice},
		{Method: "DELETE", Path: "/api/admin/prices", Tag: "budgets", Admin: true, Summary: "Remove one model's price (?provider=&model=)",
			Status: 204, Handle: deletePrice},
	}
}

// budgetScope finds the scope named by the path, visible to the principal.
func budgetScope(ctx context.Context, db store.DB, p access.Principal, kind, id string) (budgets.Scope, error) {
	switch kind {
	case budgets.ScopeOrganisation:
		o, err := orgs.GetOrg(ctx, db, p, id)
		return budgets.Scope{Kind: kind, ID: o.ID, OrganisationID: o.ID}, err
	case budgets.ScopeGuild:
		g, err := orgs.GetGuild(ctx, db, p, id)
		return budgets.Scope{Kind: kind, ID: g.ID, OrganisationID: g.OrganisationID, GuildID: g.ID}, err
	}
	a, err := orgs.GetAgent(ctx, db, p, id)
	return budgets.Scope{Kind: kind, ID: a.ID, OrganisationID: a.OrganisationID, GuildID: a.GuildID}, err
}

func budgetHandler(kind string, set bool) handler {
	return func(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
		var in budgets.Limits
		if set {
			if err := bindJSON(c, &in); err != nil {
				return 0, nil, err
			}
		}
		sc, err := budgetScope(ctx, db, p, kind, c.Param("id"))
		if err != nil {
			return 0, nil, err
		}
		if set {
			if err := budgets.Set(ctx, db, sc, in); err != nil {
				return 0, nil, err
			}
		}
		b, err := budgets.Get(ctx, db, sc, time.Now())
		return http.StatusOK, b, err
	}
}

func listPrices(ctx context.Context, _ *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	out, err := usage.Prices(ctx, db)
	return http.StatusOK, out, err
}

func putPrice(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	var in usage.Price
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if err := in.Check(models.Known); err != nil {
		return 0, nil, err
	}
	out, err := usage.SetPrice(ctx, db, in)
	return http.StatusOK, out, err
}

func deletePrice(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	provider, model := c.Query("provider"), c.Query("model")
	if provider == "" || model == "" {
		return 0, nil, badRequest("name the price to remove with ?provider= and ?model=")
	}
	return http.StatusNoContent, nil, usage.DeletePrice(ctx, db, provider, model)
}

// budgetError is the 429 of a start a reached budget refuses: which scope,
// which limit, its figure, the use and when it resets.
func budgetError(e *budgets.ReachedError) *Error {
	r := e.Reach
	return &Error{Status: http.StatusTooManyRequests, Code: "budget_reached", Message: e.Error(), Budget: &r}
}

// setBudgetRetryAfter tells a client refused by a budget when to try again.
func setBudgetRetryAfter(c *gin.Context, e *Error) {
	if e.Budget == nil {
		return
	}
	secs := math.Ceil(time.Until(e.Budget.ResetsAt).Seconds())
	c.Header("Retry-After", strconv.Itoa(int(max(secs, 1))))
}
