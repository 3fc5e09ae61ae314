package api_test

// The one headless Chromium the app's browser tests drive, with what they
// do in it: open, click, type, wait for text, screenshots and axe-core.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/access"
)

// chromiumOrSkip is the Chromium the browser tests drive.
func chromiumOrSkip(t *testing.T) string {
	t.Helper()
	chromium := "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed (apt-get install chromium)")
		}
		t.Skip("no Chromium at /usr/bin/chromium")
	}
	return chromium
}

// localMode signs the app in as the box's local user, as on loopback.
func localMode(t *testing.T) func(*api.Deps) {
	return func(d *api.Deps) {
		u, err := access.LocalUser(context.Background(), d.DB)
		if err != nil {
			t.Fatal(err)
		}
		d.AuthMode, d.LocalUserID = "local", u.ID
	}
}

// typeIn types text into the input sel, as a person does.
func (b *appBrowser) typeIn(sel, text string) {
	b.t.Helper()
	c, stop := context.WithTimeout(b.ctx, time.Minute)
	defer stop()
	if err := chromedp.Do(c, chromedp.SendKeys(chromedp.CSS(sel), text)); err != nil {
		b.t.Fatalf("type into %s: %v", sel, err)
	}
}

// clickText clicks the button labelled label inside the first element
// matching within that holds text, once there is one.
func (b *appBrowser) clickText(within, text, label string) {
	b.t.Helper()
	b.waitText(within, text)
	js := `(() => { const el = [...document.querySelectorAll(` + jsString(within) + `)].find((e) => e.textContent.includes(` + jsString(text) + `));
  const btn = el && [...el.querySelectorAll("button")].find((x) => x.textContent.trim() === ` + jsString(label) + `);
  if (!btn) return "no button"; btn.click(); return ""; })()`
	if got := b.eval(js); got != "" {
		b.t.Fatalf("%s holding %q has no %q button", within, text, label)
	}
}

func jsString(s string) string { return strconv.Quote(s) }

// appBrowser is a headless Chromium on the app.
type appBrowser struct {
	t    *testing.T
	ctx  context.Context
	base string
}

// newAppBrowser starts one; extra options (a phone's window size) add to the defaults.
func newAppBrowser(t *testing.T, chromium, base string, extra ...chromedp.ExecAllocatorOption) *appBrowser {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true))
	opts = append(opts, extra...)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return &appBrowser{t: t, ctx: ctx, base: base}
}

func (b *appBrowser) open(path string) { b.t.Helper(); b.openURL(b.base + path) }

func (b *appBrowser) openURL(u string) {
	b.t.Helper()
	c, stop := context.WithTimeout(b.ctx, time.Minute)
	defer stop()
	if err := chromedp.Do(c, chromedp.Navigate(u)); err != nil {
		b.t.Fatalf("open %s: %v", u, err)
	}
}

func (b *appBrowser) eval(js string) string {
	b.t.Helper()
	c, stop := context.WithTimeout(b.ctx, time.Minute)
	defer stop()
	out, err := chromedp.Run(c, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("eval %s: %v", js, err)
	}
	return out
}

func (b *appBrowser) click(sel string) {
	b.t.Helper()
	c, stop := context.WithTimeout(b.ctx, time.Minute)
	defer stop()
	for {
		err := chromedp.Do(c, chromedp.Click(chromedp.CSS(sel)))
		// A page that redraws between the query and the click replaces the
		// node found; the next query finds the new one.
		if err != nil && strings.Contains(err.Error(), "Could not find node with given id") && c.Err() == nil {
			continue
		}
		if err != nil {
			b.t.Fatalf("click %s: %v", sel, err)
		}
		return
	}
}

// waitText waits until an element matching sel holds want; what the page
// shows when it never does is in the failure.
func (b *appBrowser) waitText(sel, want string) { b.t.Helper(); b.waitTextHeld(sel, want, true) }

// waitNoText waits until the elements matching sel (there must be some) no
// longer hold gone: a page that redraws after an event reaches it.
func (b *appBrowser) waitNoText(sel, gone string) { b.t.Helper(); b.waitTextHeld(sel, gone, false) }

func (b *appBrowser) waitTextHeld(sel, s string, held bool) {
	b.t.Helper()
	text := fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.textContent).join("\n")`, sel)
	// Checked again on every change of the page; a navigation ends a poll
	// with an error, and the next one watches the new page.
	js := fmt.Sprintf(`((t) => t !== "" && t.includes(%q) === %t)(%s)`, s, held, text)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		c, stop := context.WithDeadline(b.ctx, deadline)
		ok, err := chromedp.Run(c, chromedp.Poll[bool](js, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(time.Until(deadline))))
		stop()
		if err == nil && ok {
			return
		}
	}
	verb := "never held"
	if !held {
		verb = "never stopped holding"
	}
	b.t.Fatalf("%s %s %q (it holds %q; the page at %s says %q)", sel, verb, s, b.eval(text), b.eval(`location.href`), b.eval(`document.body.innerText`))
}

// noSecretInPage: the page's address and text hold no code or state.
func (b *appBrowser) noSecretInPage() {
	b.t.Helper()
	if page := b.eval(`location.href + document.documentElement.outerHTML`); strings.Contains(page, "code=") || strings.Contains(page, "state=") {
		b.t.Errorf("the page carries a code or state: %.300s", page)
	}
}

// screenshot writes the page into docs/app/ when GUILDS_APP_SCREENSHOTS is
// set (the documentation's images are refreshed by the tests).
func (b *appBrowser) screenshot(name string) { b.t.Helper(); saveScreenshot(b.t, b.ctx, name) }

// saveScreenshot writes the page of the browser context ctx into docs/app/name
// when GUILDS_APP_SCREENSHOTS is set; a plain test run writes nothing.
func saveScreenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if os.Getenv("GUILDS_APP_SCREENSHOTS") == "" {
		return
	}
	c, stop := context.WithTimeout(ctx, time.Minute)
	defer stop()
	png, err := chromedp.Run(c, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", "app", name), png, 0o644); err != nil { //nolint:gosec // a documentation image
		t.Fatal(err)
	}
}

// axeScript is axe-core as .ci/run installs it (pinned there).
func axeScript(t *testing.T) string {
	t.Helper()
	path := os.Getenv("GUILDS_AXE_JS")
	if path == "" {
		path = "/opt/axe-core/node_modules/axe-core/axe.min.js"
	}
	js, err := os.ReadFile(path) //nolint:gosec // a test fixture's path
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("axe-core is not installed (.ci/run installs it): %v", err)
		}
		t.Skipf("no axe-core at %s", path)
	}
	return string(js)
}

type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any `json:"target"`
	} `json:"nodes"`
}

// accessible runs axe-core over the page as it is now and fails the test
// on every serious or critical violation, and on headings out of order,
// naming the page and the elements.
func (b *appBrowser) accessible(axe, page string) {
	b.t.Helper()
	if b.eval(`String(typeof window.axe)`) != "object" {
		b.eval(axe + `;""`)
	}
	out := b.eval(`axe.run(document, { resultTypes: ["violations"] }).then((r) => JSON.stringify(r.violations))`)
	var vs []axeViolation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		b.t.Fatalf("axe on %s: %v (%.200s)", page, err, out)
	}
	for _, v := range vs {
		if v.Impact != "serious" && v.Impact != "critical" && v.ID != "heading-order" {
			continue
		}
		var where []string
		for _, n := range v.Nodes {
			where = append(where, strings.Trim(strings.ReplaceAll(jsonText(n.Target), `"`, ""), "[]"))
		}
		b.t.Errorf("%s: %s violation %s (%s) at %s", page, v.Impact, v.ID, v.Help, strings.Join(where, "; "))
	}
}

func jsonText(v any) string { out, _ := json.Marshal(v); return string(out) }
