package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/secret"
)

// TestInboxInChromium: the navigation counts what waits for the operator
// (a secret an agent asked for, a server's form, an issue an agent filed),
// the Inbox page shows each, and a secret typed there answers the agent's
// request (issue 34 item 7).
func TestInboxInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	entry, err := secret.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	var local string
	e := apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) {
		u, err := access.LocalUser(context.Background(), d.DB)
		if err != nil {
			t.Fatal(err)
		}
		d.AuthMode, d.LocalUserID, local = "local", u.ID, u.ID
		d.Models = &models.Resolver{Integrations: d.Integrations, Keyring: kr}
	}})
	ctx := context.Background()
	org := e.Do("", "POST", "/api/orgs", map[string]any{"name": "Local"}).Map()["id"].(string)
	if err := access.AddMember(ctx, e.DB, local, org, access.RoleOperator); err != nil {
		t.Fatal(err)
	}
	guild := e.Do("", "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "G"}).Map()["id"].(string)
	agent := e.Do("", "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Buyer"}).Map()["id"].(string)
	var runID string
	if err := e.DB.QueryRow(ctx, `INSERT INTO runs (agent_id, guild_id, organisation_id, trigger, budget, remaining, started_by)
		VALUES ($1, $2, $3, 'direct', 5, 5, $4) RETURNING id`, agent, guild, org, local).Scan(&runID); err != nil {
		t.Fatal(err)
	}
	req, err := agentsecrets.OpenRequest(ctx, e.DB, agentsecrets.NewRequest{RunID: runID, AgentID: agent, OrgID: org, Seq: 1,
		Name: "SHOP_TOKEN", Reason: "to order the books"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := inputs.Ask(ctx, e.DB, inputs.Request{RunID: runID, Seq: 2, OrganisationID: org, GuildID: guild, AgentID: agent,
		Tool: "shop_order", Server: "shop", ExpiresAt: time.Now().Add(time.Hour)},
		inputs.Form{Mode: inputs.ModeURL, Message: "Sign in to the shop", URL: "https://shop.example/login"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.DB.Exec(ctx, `INSERT INTO tooling_issues (guild_id, agent_id, run_id, kind, summary) VALUES ($1, $2, $3, 'tool_failure', 'the shop is down')`,
		guild, agent, runID); err != nil {
		t.Fatal(err)
	}

	bctx := newAppBrowser(t, chromium, e.HTTP.URL, chromedp.WindowSize(1280, 900)).ctx
	c, stop := context.WithTimeout(bctx, 60*time.Second) // a failure bound
	defer stop()
	if err := chromedp.Do(c,
		chromedp.Navigate(e.HTTP.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS(`#inbox-count:not([hidden])`)),
	); err != nil {
		t.Fatal(err)
	}
	count, err := chromedp.Run(c, chromedp.TextContent(chromedp.CSS(`#inbox-count`)))
	if err != nil || count != "3" {
		t.Fatalf("the navigation counts %q waiting (%v), want 3", count, err)
	}
	if err := chromedp.Do(c,
		chromedp.Click(chromedp.CSS(`#nav-inbox`)),
		chromedp.WaitVisible(chromedp.CSS(`#secret-requests input[type="password"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#inbox-issues a`)),
		chromedp.WaitVisible(chromedp.CSS(`#inputs a[target="_blank"]`)),
		chromedp.SetValue(chromedp.CSS(`#secret-requests input[type="password"]`), "shop-token-0123456789"),
	); err != nil {
		t.Fatal(err)
	}
	said, err := chromedp.Run(c, chromedp.Evaluate[string](`new Promise((done) => {
		const el = document.getElementById("status");
		new MutationObserver(() => { if (el.textContent) done(el.textContent); }).observe(el, { childList: true, characterData: true, subtree: true });
		[...document.querySelectorAll("#secret-requests button")].find((b) => b.textContent === "Provide").click();
	})`, chromedp.EvalAwaitPromise))
	if err != nil || said != "SHOP_TOKEN provided" {
		t.Fatalf("the page said %q (%v)", said, err)
	}
	got, err := agentsecrets.RequestAt(ctx, e.DB, runID, 1)
	if err != nil || got.ID != req.ID || got.Status != "provided" {
		t.Fatalf("request = %+v, %v", got, err)
	}
}
