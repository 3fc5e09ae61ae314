package api_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/secret"
)

// byText finds an element by its tag and visible text, the way an operator
// reads the page.
func byText(tag, text string) chromedp.Search {
	return chromedp.Search(`//` + tag + `[normalize-space()="` + text + `"]`)
}

// fieldLabelled finds the control a visible label names.
func fieldLabelled(label string) chromedp.Search {
	return chromedp.Search(`//*[@id=//label[normalize-space()="` + label + `"]/@for]`)
}

// TestStudioAndBuilderInChromium drives Studio from the inbox (the failing
// call, its switch chain, the login's health, a Test of the same call with
// edited arguments, and Resolve) and the guild builder (a job, the coach's
// draft from the scripted model with a search of the organisation's Notion,
// an edit, and the guild created in one step), by visible text and roles;
// it writes a screenshot of each page to docs/app (issue 34 items 8 and 9).
func TestStudioAndBuilderInChromium(t *testing.T) {
	chromium := "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed (apt-get install chromium)")
		}
		t.Skip("no Chromium at /usr/bin/chromium")
	}
	model := newCoachModel(t, "sk-or-coach-0123456789",
		[]scriptedCall{{"list_published_servers", map[string]any{}}, {"search_notion", map[string]any{"query": "orders"}}},
		[]scriptedCall{{"propose_guild", map[string]any{"guild": map[string]any{"name": "Order desk", "description": "answers the shop's orders"},
			"why": "The Orders database in Notion already holds the orders, so the clerk reads it.",
			"agents": []any{map[string]any{"name": "Clerk", "prompt": "Answer each order; the orders are in the Notion database Orders.",
				"switches": []any{map[string]any{"server": "shop", "tool": "echo", "on": true}}}},
			"switches": []any{map[string]any{"server": "shop", "on": true}}}}},
	)
	entry, err := secret.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	var local string
	me := newMCPEnvDeps(t, false, nil, nil, func(d *api.Deps) {
		u, err := access.LocalUser(context.Background(), d.DB)
		if err != nil {
			t.Fatal(err)
		}
		d.AuthMode, d.LocalUserID, local = "local", u.ID, u.ID
		d.URLPolicy = mcpoauth.Policy{AllowLoopback: true}
		d.Models = &models.Resolver{Integrations: d.Integrations, Keyring: kr, BaseURLs: map[string]string{"openrouter": model.URL}}
	})
	ctx := context.Background()
	org := me.Do("", "POST", "/api/orgs", map[string]any{"name": "Shop"}).Map()["id"].(string)
	if err := access.AddMember(ctx, me.DB, local, org, access.RoleOperator); err != nil {
		t.Fatal(err)
	}
	guild := me.Do("", "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Orders"}).Map()["id"].(string)
	agent := me.Do("", "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Buyer"}).Map()["id"].(string)
	if r := me.Do("", "PUT", "/api/orgs/"+org+"/model-keys/openrouter", map[string]any{"key": model.key}); r.Status != 204 {
		t.Fatalf("model key: %d %s", r.Status, r.Body)
	}

	// A shop server with no login, on at the organisation, and Notion
	// (served here by a local MCP server) connected there too.
	shop := newHTTPServer(t, server.NewStreamableHTTPServer(echoServer()))
	addServer(t, me.DB, "shop", shop+"/mcp", "none", "{}")
	notion := server.NewMCPServer("notion", "1.0.0", server.WithToolCapabilities(false))
	notion.AddTool(mcp.NewTool("notion-search", mcp.WithString("query", mcp.Required())), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("Orders (database) https://www.notion.so/orders-0123 matched " + req.GetString("query", "")), nil
	})
	addServer(t, me.DB, "notion", newHTTPServer(t, server.NewStreamableHTTPServer(notion))+"/mcp", "none", "{}")
	var conn string
	for _, slug := range []string{"notion", "shop"} {
		r := me.Do("", "PUT", "/api/bindings", map[string]any{"scope": "organisation", "scope_id": org, "catalog_kind": "mcp", "catalog_id": slug, "enabled": true})
		if r.Status != 200 {
			t.Fatalf("turn on %s: %d %s", slug, r.Status, r.Body)
		}
		conn, _ = r.Map()["connection_id"].(string)
	}
	if _, err := me.DB.Exec(ctx, `INSERT INTO mcp_catalog_tools (server_id, name, description) SELECT id, 'echo', 'Echo' FROM mcp_servers WHERE slug = 'shop'
		ON CONFLICT DO NOTHING`); err != nil {
		t.Fatal(err)
	}

	// A run whose call of shop_echo failed, and the issue it filed.
	var runID, issueID string
	if err := me.DB.QueryRow(ctx, `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, status, budget, remaining, started_by, started_at)
		VALUES ($1, $2, $3, 'direct', 'completed', 5, 3, $4, now()) RETURNING id`, agent, guild, org, local).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	snapshot := `[{"name":"shop_echo","kind":"mcp","description":"Echo","class":"mcp","connection_id":"` + conn + `","server_slug":"shop","remote_name":"echo",
		"schema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}},
		{"name":"report_issue","kind":"native","description":"Report","class":"default","schema":{"type":"object"}}]`
	if _, err := me.DB.Exec(ctx, `INSERT INTO run_snapshots (run_id, tools) VALUES ($1, $2)`, runID, snapshot); err != nil {
		t.Fatal(err)
	}
	if _, err := me.DB.Exec(ctx, `INSERT INTO tool_calls (run_id, seq, call_id, tool_name, arguments, result, outcome, started_at, finished_at, duration_ms) VALUES
		($1, 2, 'c1', 'shop_echo', '{"text":"order 17"}', 'ERROR: the shop answered 503', 'error', now(), now(), 812),
		($1, 4, 'c2', 'report_issue', '{"kind":"tool_failure","summary":"the shop is down"}', 'filed', 'ok', now(), now(), 3)`, runID); err != nil {
		t.Fatal(err)
	}
	if err := me.DB.QueryRow(ctx, `INSERT INTO tooling_issues (guild_id, agent_id, run_id, kind, summary, detail)
		VALUES ($1, $2, $3, 'tool_failure', 'the shop is down', 'shop_echo answered 503 twice') RETURNING id`, guild, agent, runID).Scan(&issueID); err != nil {
		t.Fatal(err)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 1400), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	c, stop := context.WithTimeout(bctx, 3*time.Minute) // a failure bound
	defer stop()
	text := func(sel chromedp.Search) string {
		t.Helper()
		s, err := chromedp.Run(c, chromedp.TextContent(sel))
		if err != nil {
			t.Fatalf("%s: %v", sel, err)
		}
		return s
	}

	// Studio, from the inbox.
	if err := chromedp.Do(c,
		chromedp.Navigate(me.HTTP.URL+"/inbox"),
		chromedp.Click(byText("a", "Investigate in Studio")),
		chromedp.WaitVisible(byText("h1", "Studio: the shop is down")),
		chromedp.WaitVisible(byText("h2", "The failing call")),
		chromedp.WaitVisible(chromedp.Search(`//p[@id="login-health" and contains(., "Credential:")]`)),
	); err != nil {
		t.Fatal(err)
	}
	if got := text(chromedp.Search(`//h2[normalize-space()="The failing call"]/following-sibling::pre[1]`)); !strings.Contains(got, `"text": "order 17"`) {
		t.Fatalf("the failing call's arguments read %q", got)
	}
	if got := text(chromedp.Search(`//h2[normalize-space()="The failing call"]/following-sibling::pre[2]`)); got != "ERROR: the shop answered 503" {
		t.Fatalf("the failing call's result reads %q", got)
	}
	if got := text(chromedp.Search(`//table[@class="walk"]//tr[th[normalize-space()="Organisation"]]`)); !strings.Contains(got, "On") {
		t.Fatalf("the switch chain's organisation row reads %q", got)
	}
	if err := chromedp.Do(c,
		chromedp.SetValue(fieldLabelled("Arguments (JSON)"), `{"text": "order 18"}`),
		chromedp.Click(byText("button", "Run the test")),
		chromedp.WaitVisible(chromedp.Search(`//pre[@id="studio-test-result" and normalize-space()="echo: order 18"]`)),
	); err != nil {
		t.Fatal(err)
	}
	saveScreenshot(t, c, "studio.png")
	if _, err := chromedp.Run(c, chromedp.Evaluate[bool](`(window.confirm = () => true, true)`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(c,
		chromedp.Click(byText("button", "Resolve")),
		chromedp.WaitVisible(chromedp.Search(`//span[@id="issue-state" and starts-with(normalize-space(), "resolved")]`)),
	); err != nil {
		t.Fatal(err)
	}
	var state string
	if err := me.DB.QueryRow(ctx, `SELECT status FROM tooling_issues WHERE id = $1`, issueID).Scan(&state); err != nil || state != "resolved" {
		t.Fatalf("issue status %q (%v)", state, err)
	}

	// The guild builder, from the organisation's Guilds tab.
	if err := chromedp.Do(c,
		chromedp.Navigate(me.HTTP.URL+"/orgs/"+org),
		chromedp.Click(byText("a", "Build a guild with the coach")),
		chromedp.WaitVisible(byText("h1", "Guild builder")),
		chromedp.SendKeys(fieldLabelled("What should this guild do?"), "Answer the shop's orders as they come in"),
		chromedp.Click(byText("button", "Ask the coach")),
		chromedp.WaitVisible(byText("h2", "Draft")),
		chromedp.WaitVisible(byText("p", "The Orders database in Notion already holds the orders, so the clerk reads it.")),
	); err != nil {
		t.Fatal(err)
	}
	if got, err := chromedp.Run(c, chromedp.Evaluate[string](`document.getElementById(document.evaluate('//label[normalize-space()="Guild name"]/@for', document, null, 2).stringValue).value`)); err != nil || got != "Order desk" {
		t.Fatalf("the draft's guild name is %q (%v)", got, err)
	}
	if !strings.Contains(model.Received(), "https://www.notion.so/orders-0123 matched orders") {
		t.Fatal("the coach was not sent the Notion search's result")
	}
	saveScreenshot(t, c, "builder.png")
	if err := chromedp.Do(c,
		chromedp.SendKeys(fieldLabelled("Guild name"), " EU"),
		chromedp.Click(byText("button", "Create the guild")),
		chromedp.WaitVisible(byText("h1", "Order desk EU")),
	); err != nil {
		t.Fatal(err)
	}
	var agents, switches int
	if err := me.DB.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM agents a JOIN guilds g ON g.id = a.guild_id WHERE g.name = 'Order desk EU' AND a.prompt LIKE '%Notion database Orders%'),
		(SELECT count(*) FROM bindings b WHERE b.scope_id = (SELECT id FROM guilds WHERE name = 'Order desk EU')
			OR b.scope_id IN (SELECT a.id FROM agents a JOIN guilds g ON g.id = a.guild_id WHERE g.name = 'Order desk EU'))`).Scan(&agents, &switches); err != nil {
		t.Fatal(err)
	}
	if agents != 1 || switches != 2 {
		t.Fatalf("created %d agents and %d switches, want 1 and 2", agents, switches)
	}
}
