package api_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/webapp"
)

// TestAppFirstLoadIsUnder300KB: every file the start page loads (all the
// app's modules are imported at start), compressed as the server sends them.
func TestAppFirstLoadIsUnder300KB(t *testing.T) {
	total := 0
	for _, p := range webapp.Paths() {
		a, _ := webapp.Lookup(p)
		if a.Gzip != nil {
			total += len(a.Gzip)
		} else {
			total += len(a.Body)
		}
	}
	t.Logf("figure: the app's files are %d bytes compressed (%d files)", total, len(webapp.Paths()))
	if total > 300*1024 {
		t.Fatalf("the first load is %d bytes compressed, over 300 KB", total)
	}
}

// TestAppLocalModeInChromium: on loopback in local mode the app opens
// without signing in; with no model key anywhere the banner shows and the
// model picker marks providers No key yet; a Tools view of 50 more servers
// renders (its time is logged as a figure).
func TestAppLocalModeInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	e := apitest.New(t, apitest.Options{Tweak: localMode(t)})
	org := e.Do("", "POST", "/api/orgs", map[string]any{"name": "Local"}).Map()["id"].(string)
	guild := e.Do("", "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "G"}).Map()["id"].(string)
	for i := range 50 {
		if r := e.Do("", "POST", "/api/admin/mcp/servers", map[string]any{"slug": fmt.Sprintf("bulk_%02d", i), "name": fmt.Sprintf("Bulk %02d", i),
			"transport": "http", "published": true, "auth": "none", "url": "https://example.com/mcp"}); r.Status != 201 {
			t.Fatalf("add server: %d %s", r.Status, r.Body)
		}
	}

	// A token row with key_fields (Qonto's shape) and a configured row with fields.
	for _, row := range []map[string]any{
		{"slug": "twokeys", "name": "Two keys", "auth": "token", "config": map[string]any{"key_fields": []map[string]any{
			{"name": "login", "label": "Login"}, {"name": "secret_key", "label": "Secret key"}, {"name": "extra", "label": "Extra", "optional": true}}}},
		{"slug": "valued", "name": "Valued", "auth": "none", "config": map[string]any{"fields": []map[string]any{
			{"name": "tenant", "label": "Tenant", "header": "X-Tenant", "secret": false}}}},
	} {
		row["transport"], row["published"], row["url"] = "http", true, "https://example.com/mcp"
		if r := e.Do("", "POST", "/api/admin/mcp/servers", row); r.Status != 201 {
			t.Fatalf("add %s: %d %s", row["slug"], r.Status, r.Body)
		}
	}

	ctx := newAppBrowser(t, chromium, e.HTTP.URL, chromedp.WindowSize(390, 844)).ctx
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	waitFor := func(sel, want string) string {
		t.Helper()
		js := fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.textContent).join("\n")`, sel)
		var got string
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			c, stop := context.WithTimeout(ctx, 5*time.Second)
			got, _ = chromedp.Run(c, chromedp.Evaluate[string](js))
			stop()
			if strings.TrimSpace(got) != "" && strings.Contains(got, want) {
				return got
			}
		}
		t.Fatalf("%s never held %q (it holds %q)", sel, want, got)
		return ""
	}
	open := func(path string) {
		t.Helper()
		c, stop := context.WithTimeout(ctx, 30*time.Second)
		defer stop()
		if err := chromedp.Do(c, chromedp.Navigate(e.HTTP.URL+path)); err != nil {
			t.Fatal(err)
		}
	}

	open("/")
	waitFor("h1", "Organisations")
	waitFor("#org-tree", "Local")
	waitFor("#no-model-key", "No model key is set")
	if got := waitFor("#nav", "Organisations"); strings.Contains(got, "Sign out") {
		t.Error("local mode offers to sign out")
	}
	open("/guilds/" + guild + "?tab=agents")
	waitFor(`form[aria-label="New agent"] select[name="provider"]`, "No key yet")

	open("/orgs/" + org + "?tab=tools")
	waitFor("#tools-view", "Bulk 49")
	// Connect's form has the fields the catalog row declares.
	click := func(sel string) {
		t.Helper()
		c, stop := context.WithTimeout(ctx, 10*time.Second)
		defer stop()
		if err := chromedp.Do(c, chromedp.Click(chromedp.CSS(sel))); err != nil {
			t.Fatalf("click %s: %v", sel, err)
		}
	}
	click(`#server-twokeys button.connect`)
	waitFor(`dialog form`, "Secret key")
	waitFor(`dialog [data-field="login"]`, "Login")
	waitFor(`dialog [data-field="extra"]`, "Extra (optional)")
	click(`dialog .close`)
	click(`#server-valued button.connect`)
	waitFor(`dialog [data-field="tenant"]`, "Tenant")
	click(`dialog .close`)
	c, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	figure, err := chromedp.Run(c, chromedp.Evaluate[string](
		`document.querySelectorAll("li.server").length + " servers in " + performance.getEntriesByName("tools-render").pop().duration.toFixed(1) + " ms"`))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("figure: Tools view (phone width) rendered %s", figure)
	saveScreenshot(t, ctx, "phone-tools.png")
}
