package api_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guilds/guilds/internal/apitest"
)

// The agent page's Stop sandbox and Reset home buttons send the workers
// their orders.
func TestAgentPageStopsAndResetsTheSandbox(t *testing.T) {
	chromium := chromiumOrSkip(t)
	ch := orders(t)
	e := apitest.New(t, apitest.Options{Tweak: localMode(t)})
	org := e.Do("", "POST", "/api/orgs", map[string]any{"name": "Local"}).Map()["id"].(string)
	guild := e.Do("", "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "G"}).Map()["id"].(string)
	agent := e.Do("", "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Coder"}).Map()["id"].(string)

	ctx := newAppBrowser(t, chromium, e.HTTP.URL).ctx
	c, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	if err := chromedp.Do(c, chromedp.Navigate(e.HTTP.URL+"/agents/"+agent)); err != nil {
		t.Fatal(err)
	}
	click := func(label string) {
		t.Helper()
		js := fmt.Sprintf(`(() => { window.confirm = () => true;
			const b = [...document.querySelectorAll("button")].find((b) => b.textContent === %q);
			if (!b) return false; b.click(); return true; })()`, label)
		// The page renders after its first API calls: the button is looked
		// for again on every change of the page, until it is there.
		if _, err := chromedp.Run(c, chromedp.Poll[bool](js, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(time.Minute))); err != nil {
			t.Fatalf("no %q button: %v", label, err)
		}
	}
	click("Stop sandbox")
	if o := nextOrderFor(t, ch, agent); o.RemoveHome {
		t.Fatalf("stop: %+v", o)
	}
	click("Reset home")
	if o := nextOrderFor(t, ch, agent); !o.RemoveHome {
		t.Fatalf("reset: %+v", o)
	}
}
