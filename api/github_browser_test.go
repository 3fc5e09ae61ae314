package api_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/access"
)

// TestGitHubConnectInChromium drives GitHub's three browser returns that
// the Go client alone cannot meet, from Connect on the Tools view to a
// connected login: an installation only requested from the organisation's
// owners, a setup redirect without a code (on to user authorization), and
// a user who reaches several installations (the app's picker page).
func TestGitHubConnectInChromium(t *testing.T) {
	chromium := "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed (apt-get install chromium)")
		}
		t.Skip("no Chromium at /usr/bin/chromium")
	}
	e := newGitHubEnv(t, true, func(d *api.Deps) {
		u, err := access.LocalUser(context.Background(), d.DB)
		if err != nil {
			t.Fatal(err)
		}
		d.AuthMode, d.LocalUserID = "local", u.ID
	})
	org := e.Do("", "POST", "/api/orgs", map[string]any{"name": "Acme"}).Map()["id"].(string)
	guild := e.Do("", "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Ops"}).Map()["id"].(string)
	acme := e.gh.AddInstallation("acme-gh")
	beta := e.gh.AddInstallation("beta-gh")
	e.gh.AddUser("octo", acme, beta)
	e.gh.BrowserUser = "octo"
	e.gh.CallbackURL = e.HTTP.URL + api.CallbackPath

	b := newAppBrowser(t, chromium, e.HTTP.URL)
	connect := func(scope, id string) {
		t.Helper()
		b.open("/" + scope + "/" + id + "?tab=tools")
		b.eval(`(window.open = () => null, "")`)
		b.click(`#server-github button.connect`)
		b.click(`dialog form button[type="submit"]`)
		b.waitText(`dialog a.authorize`, "")
		b.openURL(b.eval(`document.querySelector("dialog a.authorize").href`))
	}

	// Only an owner may install on the organisation: the request is sent,
	// and the page says it waits for them, not that the login failed.
	e.gh.OnlyRequest = true
	connect("orgs", org)
	b.waitText("h1", "Request sent")
	b.waitText("#landing-result", "owner")

	// The owner installed it; GitHub's setup redirect carries no code: the
	// callback sends the browser on to user authorization, which connects.
	e.gh.OnlyRequest, e.gh.InstallWithoutCode, e.gh.Installing = false, true, acme
	connect("orgs", org)
	b.waitText("#landing-result", "connected as acme-gh")
	b.noSecretInPage()

	// The organisation has a login, so the guild's Connect is user
	// authorization; the user reaches two installations: the picker page.
	connect("guilds", guild)
	b.waitText("h1", "Choose")
	b.waitText("#github-accounts", "beta-gh")
	b.click(`#github-accounts button[data-account="beta-gh"]`)
	b.waitText("#landing-result", "connected as beta-gh")
	b.noSecretInPage()

	if n := e.Count("github_logins"); n != 2 {
		t.Errorf("%d GitHub logins kept, want the organisation's and the guild's", n)
	}
}

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
	if err := chromedp.Do(c, chromedp.Click(chromedp.CSS(sel))); err != nil {
		b.t.Fatalf("click %s: %v", sel, err)
	}
}

// waitText waits until an element matching sel holds want; what the page
// shows when it never does is in the failure.
func (b *appBrowser) waitText(sel, want string) {
	b.t.Helper()
	text := fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.textContent).join("\n")`, sel)
	// Checked again on every change of the page; a navigation ends a poll
	// with an error, and the next one watches the new page.
	js := fmt.Sprintf(`((t) => t !== "" && t.includes(%q))(%s)`, want, text)
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		c, stop := context.WithDeadline(b.ctx, deadline)
		ok, err := chromedp.Run(c, chromedp.Poll[bool](js, chromedp.WithPollingMutation(), chromedp.WithPollingTimeout(time.Until(deadline))))
		stop()
		if err == nil && ok {
			return
		}
	}
	b.t.Fatalf("%s never held %q (it holds %q; the page at %s says %q)", sel, want, b.eval(text), b.eval(`location.href`), b.eval(`document.body.innerText`))
}

// noSecretInPage: the page's address and text hold no code or state.
func (b *appBrowser) noSecretInPage() {
	b.t.Helper()
	if page := b.eval(`location.href + document.documentElement.outerHTML`); strings.Contains(page, "code=") || strings.Contains(page, "state=") {
		b.t.Errorf("the page carries a code or state: %.300s", page)
	}
}
