package api_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/runs"
)

// TestAppAccessibilityInChromium opens every page and every tab of the app
// at a phone's width and runs axe-core over it: no serious or critical
// violation, headings in order, and no page wider than the screen. It also measures the first
// load: every byte the browser fetched for the start page (the figure in
// docs/benchmarks.md), kept under 300 KB.
func TestAppAccessibilityInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	axe := axeScript(t)
	e := apitest.New(t, apitest.Options{Tweak: localMode(t)})
	org := e.Do("", "POST", "/api/orgs", map[string]any{"name": "Local"}).Map()["id"].(string)
	guild := e.Do("", "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "G"}).Map()["id"].(string)
	agent := e.Do("", "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Scout"}).Map()["id"].(string)
	run, err := runs.Create(context.Background(), e.DB, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org,
		Trigger: "direct", Budget: 5, Message: "look around"})
	if err != nil {
		t.Fatal(err)
	}

	b := newAppBrowser(t, chromium, e.HTTP.URL, chromedp.WindowSize(390, 844))
	b.countFetches()
	b.open("/")
	b.waitText("h1", "Organisations")
	b.waitText("#org-tree", "Local")
	bytes, err := strconv.Atoi(b.eval(`String(performance.getEntriesByType("navigation").concat(performance.getEntriesByType("resource"))
		.reduce((n, e) => n + (e.transferSize || e.encodedBodySize || 0), 0))`))
	if err != nil {
		t.Fatal(err)
	}
	files := b.eval(`String(performance.getEntriesByType("resource").length + 1)`)
	t.Logf("figure: the first load of the start page transferred %d bytes (%s requests)", bytes, files)
	if bytes > 300*1024 {
		t.Errorf("the first load transferred %d bytes, over 300 KB", bytes)
	}

	pages := []struct{ path, heading string }{
		{"/", "Organisations"},
		{"/orgs/" + org, "Local"},
		{"/guilds/" + guild, "G"},
		{"/agents/" + agent, "Scout"},
		{"/runs/" + run.ID, ""},
		{"/inbox", "Inbox"},
		{"/admin", "Admin"},
		{"/agents/00000000-0000-4000-8000-000000000000", "Not found"},
		{"/no/such/page", "Not found"},
	}
	for _, p := range pages {
		b.open(p.path)
		b.waitText("#main h1", p.heading)
		b.check(axe, p.path)
		tabs := b.eval(`[...document.querySelectorAll('[role="tab"]')].map((t) => t.dataset.tab).join(" ")`)
		for _, tab := range strings.Fields(tabs) {
			b.click(`[role="tab"][data-tab="` + tab + `"]`)
			b.check(axe, p.path+"?tab="+tab)
		}
	}
}

// check runs axe over the page once it has settled and sees that nothing
// is wider than the phone's screen.
func (b *appBrowser) check(axe, page string) {
	b.t.Helper()
	b.settled()
	b.accessible(axe, page)
	if over := b.eval(`String(document.documentElement.scrollWidth - innerWidth)`); over != "0" && over[0] != '-' {
		b.t.Errorf("%s is %s px wider than a phone's screen", page, over)
	}
}

// countFetches makes every page count its API calls under way.
func (b *appBrowser) countFetches() {
	b.t.Helper()
	js := `window.__inflight = 0; const f = window.fetch; window.fetch = (...a) => { window.__inflight++;
  return f(...a).finally(() => setTimeout(() => { window.__inflight--; })); };`
	c, stop := context.WithTimeout(b.ctx, time.Minute)
	defer stop()
	add := chromedp.Action[struct{}](func(ctx context.Context, tg *chromedp.Target) (struct{}, error) {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: js})
		return struct{}{}, err
	})
	if _, err := chromedp.Run(c, add); err != nil {
		b.t.Fatal(err)
	}
}

// settled waits until no API call is under way for two frames running (a
// page that fetches in steps starts the next call before a frame passes).
func (b *appBrowser) settled() {
	b.t.Helper()
	b.eval(`new Promise((ok) => { let quiet = 0; const tick = () => {
  quiet = window.__inflight ? 0 : quiet + 1;
  if (quiet >= 2) ok(""); else requestAnimationFrame(tick); };
  tick(); })`)
}
