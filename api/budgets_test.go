package api_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/budgets"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/internal/usage"
)

// An organisation's operators read and set the budgets of the organisation,
// its guilds and its agents; an operator of another organisation can do
// neither, and bad limits are refused naming their field.
func TestBudgetsAreTheOrganisationsOwn(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	org, guild, agent := e.Hierarchy()
	_, annTok := newOperator(t, e, org, "ann")
	rival := e.Admin("POST", "/api/orgs", map[string]any{"name": "Rival", "slug": "rival"}).Map()["id"].(string)
	_, rexTok := newOperator(t, e, rival, "rex")
	paths := []string{"/api/orgs/" + org + "/budgets", "/api/guilds/" + guild + "/budgets", "/api/agents/" + agent + "/budgets"}
	for i, p := range paths {
		var b budgets.Budget
		r := e.Do(annTok, "PUT", p, map[string]any{"tool_calls_per_day": 10 + i, "tokens_per_day": 5000, "money_per_month": 12.5, "currency": "EUR"})
		r.JSON(&b)
		if r.Status != 200 || b.Limits.ToolCallsPerDay == nil || *b.Limits.ToolCallsPerDay != int64(10+i) ||
			b.Limits.Currency != "EUR" || b.Use.ToolCallsToday != 0 || b.DayResets.IsZero() {
			t.Fatalf("put %s: %d %s", p, r.Status, r.Body)
		}
		if r := e.Do(rexTok, "GET", p, nil); r.Status != 404 {
			t.Fatalf("another organisation read %s: %d", p, r.Status)
		}
		if r := e.Do(rexTok, "PUT", p, map[string]any{"tool_calls_per_day": 1000}); r.Status != 404 {
			t.Fatalf("another organisation set %s: %d", p, r.Status)
		}
		r = e.Do(annTok, "GET", p, nil)
		r.JSON(&b)
		if r.Status != 200 || *b.Limits.ToolCallsPerDay != int64(10+i) {
			t.Fatalf("get %s after the rival's attempt: %s", p, r.Body)
		}
	}
	r := e.Do(annTok, "PUT", paths[0], map[string]any{"tool_calls_per_day": -1, "money_per_month": -2, "currency": "euro"})
	if r.Status != 422 || !strings.Contains(string(r.Body), "tool_calls_per_day") || !strings.Contains(string(r.Body), "money_per_month") ||
		!strings.Contains(string(r.Body), "currency") {
		t.Fatalf("bad limits: %d %s", r.Status, r.Body)
	}
	var b budgets.Budget
	e.Do(annTok, "GET", paths[0], nil).JSON(&b)
	if *b.Limits.ToolCallsPerDay != 10 {
		t.Fatalf("a refused PUT changed the limits: %+v", b.Limits)
	}
	// Limits all null clear the scope.
	e.Do(annTok, "PUT", paths[0], map[string]any{}).JSON(&b)
	if b.Limits.ToolCallsPerDay != nil || b.Limits.MoneyPerMonth != nil || b.Limits.Currency != "USD" {
		t.Fatalf("cleared: %+v", b.Limits)
	}
}

// The price table is the instance admin's: validated, listed, removed.
func TestPriceTable(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	org, _, _ := e.Hierarchy()
	_, annTok := newOperator(t, e, org, "ann")
	good := map[string]any{"provider": "openrouter", "model": "anthropic/claude-sonnet-4", "input_per_million": 3, "output_per_million": 15, "currency": "USD"}
	if r := e.Do(annTok, "PUT", "/api/admin/prices", good); r.Status != 403 {
		t.Fatalf("an operator set a price: %d", r.Status)
	}
	r := e.Admin("PUT", "/api/admin/prices", map[string]any{"provider": "acme", "model": "", "input_per_million": -1, "currency": "dollars"})
	for _, f := range []string{"provider", "model", "input_per_million", "currency"} {
		if r.Status != 422 || !strings.Contains(string(r.Body), `"field":"`+f+`"`) {
			t.Fatalf("bad price (%s): %d %s", f, r.Status, r.Body)
		}
	}
	if r := e.Admin("PUT", "/api/admin/prices", good); r.Status != 200 {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	var prices []usage.Price
	e.Admin("GET", "/api/admin/prices", nil).JSON(&prices)
	if len(prices) != 1 || prices[0].Model != "anthropic/claude-sonnet-4" || prices[0].OutputPerMillion != 15 {
		t.Fatalf("prices %+v", prices)
	}
	if r := e.Admin("DELETE", "/api/admin/prices?provider=openrouter&model=anthropic/claude-sonnet-4", nil); r.Status != 204 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("DELETE", "/api/admin/prices?provider=openrouter&model=anthropic/claude-sonnet-4", nil); r.Status != 404 {
		t.Fatalf("delete again: %d", r.Status)
	}
}

// A start over budget is refused with 429 budget_reached naming the scope,
// the limit, its use and when it resets; nothing is stored.
func TestStartRefusedOverBudget(t *testing.T) {
	e := apitest.New(t, apitest.Options{Env: map[string]string{"OPENROUTER_API_KEY": "or-test-key-0123456789"},
		Tweak: func(d *api.Deps) { d.Temporal = testtemporal.Client(t) }})
	org, guild, agent := e.Hierarchy()
	_, annTok := newOperator(t, e, org, "ann")
	if r := e.Do(annTok, "PUT", "/api/guilds/"+guild+"/budgets", map[string]any{"tokens_per_day": 0}); r.Status != 200 {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	r := e.Do(annTok, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "hello"})
	var body struct {
		Error struct {
			Code    string        `json:"code"`
			Message string        `json:"message"`
			Budget  budgets.Reach `json:"budget"`
		} `json:"error"`
	}
	r.JSON(&body)
	if r.Status != 429 || body.Error.Code != "budget_reached" || body.Error.Budget.Scope != "guild" ||
		body.Error.Budget.ScopeID != guild || body.Error.Budget.Limit != "tokens_per_day" ||
		!strings.Contains(body.Error.Message, "the guild's budget of 0 model tokens per day is reached") {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	if s, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || s < 1 || s > 86400 {
		t.Fatalf("Retry-After %q", r.Header.Get("Retry-After"))
	}
	if n := e.Count("runs"); n != 0 {
		t.Fatalf("%d runs stored", n)
	}
}
