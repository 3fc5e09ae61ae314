package api_test

import (
	"context"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/usage"
)

// The Budgets tab shows each limit beside its use and saves new limits; a
// run a budget stopped says so on its page, with what its turns used.
func TestBudgetsInTheApp(t *testing.T) {
	chromium := chromiumOrSkip(t)
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	org, guild, agent := e.Hierarchy()
	op := e.Operator(org)
	if _, err := usage.SetPrice(ctx, e.DB, usage.Price{Provider: "openrouter", Model: "m", InputPerMillion: 3, OutputPerMillion: 15, Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	r, err := runs.Create(ctx, e.DB, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "direct", Budget: 5, Message: "go"})
	if err != nil {
		t.Fatal(err)
	}
	if err := usage.RecordTurn(ctx, e.DB, usage.Turn{RunID: r.ID, Seq: 2, OrganisationID: org, GuildID: guild, AgentID: agent,
		Provider: "openrouter", Model: "m", PromptTokens: 1000, CompletionTokens: 200}); err != nil {
		t.Fatal(err)
	}
	why := "the organisation's budget of 1200 model tokens per day is reached (1200 used today; it resets at 2026-12-06 00:00 UTC)"
	if err := runs.Stop(ctx, e.DB, r.ID, 2, "This run stopped: "+why+".", "budget_reached: "+why); err != nil {
		t.Fatal(err)
	}

	b := newAppBrowser(t, chromium, e.HTTP.URL)
	b.open("/signin")
	b.typeIn(`input[name="token"]`, op)
	b.clickText("form", "API token", "Sign in")
	b.waitText("h1", "Organisations")
	b.open("/orgs/" + org + "?tab=budgets")
	b.waitText("#budget-use", "Model tokens today")
	b.waitText("#budget-use", "1200")
	b.waitText("#budget-use", "no limit")
	b.typeIn(`input[name="tokens_per_day"]`, "1200")
	b.clickText("form", "Model tokens per day", "Save limits")
	b.waitText("#budget-use", "reached")
	var got struct {
		Limits struct {
			TokensPerDay *int64 `json:"tokens_per_day"`
		} `json:"limits"`
	}
	e.Do(op, "GET", "/api/orgs/"+org+"/budgets", nil).JSON(&got)
	if got.Limits.TokensPerDay == nil || *got.Limits.TokensPerDay != 1200 {
		t.Fatalf("saved limits %+v", got.Limits)
	}
	b.open("/runs/" + r.ID)
	b.waitText("#run-stopped", "Stopped: the organisation's budget of 1200 model tokens per day is reached")
	b.waitText("#run-usage", "Model tokens: 1000 in, 200 out · 0.0060 USD")
	b.waitText("#transcript", "This run stopped")
}

// The admin's Model prices tab lists the price table and saves a price the
// API then holds; a bad one shows the API's problem beside its field.
func TestPricesInTheApp(t *testing.T) {
	chromium := chromiumOrSkip(t)
	e := apitest.New(t, apitest.Options{})
	b := newAppBrowser(t, chromium, e.HTTP.URL)
	b.open("/signin")
	b.typeIn(`input[name="token"]`, e.AdminToken)
	b.clickText("form", "API token", "Sign in")
	b.waitText("h1", "Organisations")
	b.open("/admin?tab=prices")
	b.waitText("#prices", "No price yet")
	b.typeIn(`input[name="provider"]`, "acme")
	b.typeIn(`input[name="model"]`, "anthropic/claude-sonnet-4")
	b.typeIn(`input[name="input_per_million"]`, "3")
	b.typeIn(`input[name="output_per_million"]`, "15")
	b.clickText("form", "Output, per million tokens", "Save price")
	b.waitText(`[data-field="provider"] .field-error`, "known model provider")
	b.eval(`(() => { document.querySelector('input[name="provider"]').value = ""; return ""; })()`)
	b.typeIn(`input[name="provider"]`, "openrouter")
	b.clickText("form", "Output, per million tokens", "Save price")
	b.waitText("#prices", "anthropic/claude-sonnet-4")
	var prices []usage.Price
	e.Admin("GET", "/api/admin/prices", nil).JSON(&prices)
	if len(prices) != 1 || prices[0].Provider != "openrouter" || prices[0].InputPerMillion != 3 || prices[0].OutputPerMillion != 15 {
		t.Fatalf("prices %+v", prices)
	}
}
