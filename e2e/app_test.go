package e2e

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
)

// TestOperatorApp drives the operator app in Debian's Chromium against a
// deployed platform (serve and worker processes, scripted model, a local
// key-protected MCP server and the fake authorization server). Set
// GUILDS_APP_SCREENSHOTS=1 to write the screenshots to docs/app.
func TestOperatorApp(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform and a browser")
	}
	chromium := "/usr/bin/chromium"
	if _, err := os.Stat(chromium); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("Chromium is not installed (apt-get install chromium)")
		}
		t.Skip("no Chromium at /usr/bin/chromium")
	}
	// The binary embeds the app's files: consulting them keys the test cache on them.
	if err := filepath.WalkDir(filepath.Join("..", "internal", "webapp", "assets"), func(p string, _ fs.DirEntry, err error) error {
		if err == nil {
			_, err = os.Stat(p)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	shots := t.TempDir()
	if os.Getenv("GUILDS_APP_SCREENSHOTS") != "" {
		shots = filepath.Join("..", "docs", "app")
	}

	as := oauthtest.New(t)
	as.EmailDomain = "acme.test"
	rs := as.Protect(t, "/mcp", server.NewStreamableHTTPServer(acmeServer(), server.WithStateful(true)), nil)
	keyed := keyedServer(t, "Bearer keyed-good-key")
	model := newScriptedModel(t, boxModelKey,
		[]toolCall{{"report_issue", map[string]any{"kind": "tool_failure", "summary": "the fixture tool failed", "detail": "as scripted"}}},
		nil,
		// The guild builder's coach.
		[]toolCall{{"list_published_servers", map[string]any{}}, {"list_logins", map[string]any{}}},
		[]toolCall{{"propose_guild", map[string]any{"guild": map[string]any{"name": "Fixture books"}, "why": "One keeper is enough.",
			"agents": []any{map[string]any{"name": "Keeper", "prompt": "Keep the fixture's books."}}}}})
	d := deploy(t, map[string]string{"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL})
	d.must(201, "POST", "/api/admin/mcp/servers", map[string]any{"slug": "acme", "name": "Acme", "transport": "http", "published": true,
		"auth": "oauth", "url": rs.URL + "/mcp", "config": map[string]any{"provider": "oauth2", "dynamic_registration": true}})
	d.must(201, "POST", "/api/admin/mcp/servers", map[string]any{"slug": "keyed", "name": "Keyed", "transport": "http", "published": true,
		"auth": "token", "url": keyed, "config": map[string]any{"header": "Authorization", "scheme": "Bearer"}})

	b := newBrowser(t, chromium, d.API, shots)

	// Sign in with the admin token. This first load, on a fresh profile, is the figure's.
	b.open("/")
	b.waitText("h1", "Sign in")
	t.Logf("figure: first load transferred %s bytes (compressed) in %s files", b.eval(`String(performance.getEntriesByType("navigation")[0].transferSize + performance.getEntriesByType("resource").filter(r => !r.name.includes("/api/")).reduce((n, r) => n + r.transferSize, 0))`),
		b.eval(`String(1 + performance.getEntriesByType("resource").filter(r => !r.name.includes("/api/")).length)`))
	b.fill(`input[name="token"]`, d.Token)
	b.submit(`form[aria-label="Sign in"]`)
	b.waitText("h1", "Organisations")
	if strings.Contains(b.eval(`document.cookie`), "guilds_session") {
		t.Fatal("the session cookie is readable by the page")
	}

	// Organisation, guild and agent.
	b.fill(`form[aria-label="New organisation"] input[name="name"]`, "Acme")
	b.submit(`form[aria-label="New organisation"]`)
	b.waitText("h1", "Acme")
	org := strings.TrimPrefix(b.eval(`location.pathname`), "/orgs/")
	b.fill(`form[aria-label="New guild"] input[name="name"]`, "Ops")
	b.submit(`form[aria-label="New guild"]`)
	b.waitText("h1", "Ops")
	guild := strings.TrimPrefix(b.eval(`location.pathname`), "/guilds/")
	b.fill(`form[aria-label="New agent"] input[name="name"]`, "Scribe")
	b.submit(`form[aria-label="New agent"]`)
	b.waitText("h1", "Scribe")
	agent := strings.TrimPrefix(b.eval(`location.pathname`), "/agents/")

	// Bad input: the API's problem shows next to its field.
	b.fill(`form[aria-label="Agent settings"] input[name="max_scripts"]`, "5000")
	b.submit(`form[aria-label="Agent settings"]`)
	b.waitText(`[data-field="max_scripts"] .field-error`, "between 0 and 1000")
	b.shot("agent-settings")
	b.checkLabels("agent settings")
	b.fill(`form[aria-label="Agent settings"] input[name="max_scripts"]`, "3")
	b.click(`#flag-scripting`)
	b.submit(`form[aria-label="Agent settings"]`)
	b.waitText("#status", "Agent saved")

	// A key login at the guild, Test one of its tools.
	b.open("/guilds/" + guild + "?tab=tools")
	b.waitVisible(`#server-keyed button.connect`)
	// What the box cannot do says which variable would switch it on.
	b.waitText(`#native-tavily_search`, "not offered")
	b.waitText(`#native-tavily_search`, "TAVILY_API_KEY")
	b.waitText(`#server-gmail`, "Not set up")
	b.waitText(`#server-gmail .missing`, "GMAIL_OAUTH_CLIENT_ID")
	if b.eval(`String(document.querySelector("#server-gmail button.connect").disabled)`) != "true" {
		t.Error("Connect is offered on a server that is not set up")
	}
	b.click(`#server-keyed button.connect`)
	b.fill(`dialog input[name="key"]`, "k-bad")
	b.submit(`dialog form`)
	b.waitText(`dialog [data-field="key"] .field-error`, "at least 8 characters")
	b.fill(`dialog input[name="key"]`, "keyed-wrong-key")
	b.submit(`dialog form`)
	b.waitText(`dialog .form-error`, "")
	b.fill(`dialog input[name="key"]`, "keyed-good-key")
	b.submit(`dialog form`)
	b.waitText(`#server-keyed .server-head`, "connected")
	b.click(`#server-keyed button.test`)
	b.waitVisible(`dialog #test-tool`)
	b.eval(`(() => { const s = document.querySelector("dialog #test-tool"); s.value = [...s.options].find(o => o.text === "echo").value; s.dispatchEvent(new Event("change")); return ""; })()`)
	b.fill(`dialog input[name="text"]`, "hello from the app")
	b.submit(`dialog form[aria-label^="Arguments"]`)
	b.waitText(`#test-result`, "echo: hello from the app")
	b.shot("test-tool")
	b.checkLabels("Test")
	b.eval(`(document.querySelector("dialog").close(), "")`)

	// A native tool Off at the guild, On at the agent: each view names who decides.
	b.click(`#native-note_get input[value="off"] + label`)
	b.waitText(`#native-note_get`, "decided by the guild")
	b.shot("guild-tools")
	b.checkLabels("guild Tools view")
	b.open("/agents/" + agent + "?tab=tools")
	b.waitText(`#native-note_get`, "decided by the guild")
	b.click(`#native-note_get input[value="on"] + label`)
	b.waitText(`#native-note_get`, "decided by the agent")
	b.waitText(`#server-keyed .server-head`, "from the guild")

	// An OAuth login at the organisation: the authorization page comes back to
	// the app's landing page, which holds no code, state or token.
	b.open("/orgs/" + org + "?tab=tools")
	b.waitVisible(`#server-acme button.connect`)
	b.eval(`(window.open = () => null, "")`)
	b.click(`#server-acme button.connect`)
	b.submit(`dialog form`)
	b.waitVisible(`dialog a.authorize`)
	authURL := b.eval(`document.querySelector("dialog a.authorize").href`)
	b.openURL(authURL)
	b.waitText("#landing-result", "connected as acme.test")
	b.shot("oauth-landing")
	if loc := b.eval(`location.href`); !strings.HasSuffix(loc, "/connected") {
		t.Errorf("the landing page's address keeps its query: %s", loc)
	}
	page := b.eval(`document.documentElement.outerHTML`)
	for _, s := range append(as.Issued(), "code=", "state=") {
		if s != "" && strings.Contains(page, s) {
			t.Errorf("the landing page shows %.12q", s)
		}
	}
	b.open("/orgs/" + org + "?tab=tools")
	b.waitText(`#server-acme .server-head`, "connected")
	b.shot("org-tools")

	// A run with the scripted model: it files an issue and finishes.
	b.open("/agents/" + agent + "?tab=runs")
	b.fill(`form[aria-label="Start a run"] textarea[name="message"]`, "Report the fixture's failure.")
	b.submit(`form[aria-label="Start a run"]`)
	b.waitText("#run-status", "completed")
	b.waitText("#transcript", "report_issue")
	b.shot("run")

	// The organisation's audit trail: the run's call and the OAuth connect,
	// with who did it; filtered, the export link carries the view's filter
	// and downloads exactly the rows shown.
	b.open("/orgs/" + org + "?tab=audit")
	b.waitText("#audit-rows", "report_issue")
	b.waitText("#audit-rows", "connect")
	b.checkLabels("Audit")
	b.shot("audit")
	b.fill(`#audit-filters input[name="tool"]`, "report_issue")
	b.submit(`#audit-filters`)
	b.waitVisible(`#audit-rows[data-query="tool=report_issue"] tr[data-event]`)
	if href := b.eval(`document.getElementById("audit-export").href`); !strings.HasSuffix(href, "/audit/export?tool=report_issue") {
		t.Errorf("the export link: %s", href)
	}
	shown := b.eval(`String(document.querySelectorAll("#audit-rows tr[data-event]").length)`)
	exported := b.eval(`fetch(document.getElementById("audit-export").href).then(r => r.text()).then(t => String(t.trim().split("\n").filter(l => JSON.parse(l).tool === "report_issue").length + "/" + t.trim().split("\n").length))`)
	if exported != shown+"/"+shown {
		t.Errorf("the view shows %s events, the export holds %s (matching/all)", shown, exported)
	}

	// The guild's Issues tab: resolve it.
	b.open("/guilds/" + guild + "?tab=issues")
	b.waitText("#issues", "the fixture tool failed")
	b.shot("issues")
	b.checkLabels("Issues")
	// Studio, from the issue: the run made no call besides the report, and says so.
	b.click(`#issues li.issue a[href$="/studio"]`)
	b.waitText("h1", "Studio: the fixture tool failed")
	b.waitText("#studio-missing", "the run made no call besides the report")
	b.checkLabels("Studio")
	b.open("/guilds/" + guild + "?tab=issues")
	b.waitText("#issues", "the fixture tool failed")
	b.click(`#issues li.issue button`)
	b.waitText("#issues", "No open issue")

	// The guild builder: the coach drafts, the operator creates it all at once.
	b.open("/orgs/" + org + "/builder")
	b.fill("#builder-job", "Keep the fixture's books")
	b.submit(`form[aria-label="The guild's job"]`)
	b.waitText("#draft", "One keeper is enough.")
	b.checkLabels("Guild builder")
	b.submit(`form[aria-label="Draft guild"]`)
	b.waitText("h1", "Fixture books")

	// Admin pages.
	b.open("/admin?tab=catalog")
	b.waitText("#catalog", "Keyed")
	b.shot("admin-catalog")
	b.checkLabels("Connector catalog")
	b.open("/admin?tab=keys")
	b.waitText("#integrations", "OPENROUTER_API_KEY")
	if strings.Contains(b.eval(`document.body.innerText`), boxModelKey) {
		t.Error("Platform keys shows a key's value")
	}
	b.shot("admin-platform-keys")

	// With the cookie but without the CSRF token, a mutating call is refused.
	if st := b.eval(`fetch("/api/orgs", {method: "POST", headers: {"Content-Type": "application/json"}, body: '{"name":"x"}'}).then(r => String(r.status))`); st != "403" {
		t.Errorf("POST without the CSRF token: %s", st)
	}

	// Figures: the first load's compressed bytes, and a Tools view of 50 more servers.
	for i := range 50 {
		d.must(201, "POST", "/api/admin/mcp/servers", map[string]any{"slug": fmt.Sprintf("bulk_%02d", i), "name": fmt.Sprintf("Bulk %02d", i),
			"transport": "http", "published": true, "auth": "none", "url": keyed})
	}
	b.open("/orgs/" + org + "?tab=tools")
	b.waitText("#tools-view", "Bulk 49")
	t.Logf("figure: Tools view of %s servers rendered in %s ms", b.eval(`String(document.querySelectorAll("li.server").length)`),
		b.eval(`String(performance.getEntriesByName("tools-render").pop().duration.toFixed(1))`))
	b.open("/")
	b.waitText("h1", "Organisations")
	b.shot("home")

	// An operator of another organisation sees none of Acme's.
	other := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Beta"})["id"].(string)
	op := d.must(201, "POST", "/api/users", map[string]any{"name": "beta-op", "organisation_id": other})["token"].(string)
	b.click("#signout")
	b.waitText("h1", "Sign in")
	b.open("/orgs/" + org)
	b.waitText("h1", "Sign in")
	b.fill(`input[name="token"]`, op)
	b.submit(`form[aria-label="Sign in"]`)
	b.waitText("h1", "Not found")
	b.open("/")
	b.waitText("#org-tree", "Beta")
	if text := b.eval(`document.body.innerText`); strings.Contains(text, "Acme") || strings.Contains(text, "Ops") {
		t.Errorf("Beta's operator sees Acme's data:\n%s", text)
	}
	b.click("#signout")
	b.waitText("h1", "Sign in")
}

// checkLabels fails the test when a form control of the page has no label.
func (b *browser) checkLabels(page string) {
	b.t.Helper()
	bad := b.eval(`[...document.querySelectorAll("input, select, textarea")].filter(el => el.type !== "hidden" && !el.labels?.length && !el.getAttribute("aria-label")).map(el => el.name || el.id || el.outerHTML.slice(0, 60)).join(", ")`)
	if bad != "" {
		b.t.Errorf("%s: controls without a label: %s", page, bad)
	}
}

// keyedServer is acme's MCP server behind a fixed Authorization header.
func keyedServer(t *testing.T, good string) string {
	h := server.NewStreamableHTTPServer(acmeServer(), server.WithStateful(true))
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != good {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// browser is one Chromium tab on the app.
type browser struct {
	t     *testing.T
	ctx   context.Context
	base  string
	shots string
}

func newBrowser(t *testing.T, exec, base, shots string) *browser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exec), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return &browser{t: t, ctx: ctx, base: base, shots: shots}
}

// browserBound is how long a step in Chromium may take before the test
// fails: only a failure bound, wide because a first load on a fresh
// profile on a loaded two-core machine has taken over 30 s.
const browserBound = 2 * time.Minute

func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserBound)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.t.Fatalf("%s: %v\npage: %s", what, err, b.bodyText())
	}
}

func (b *browser) bodyText() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`location.pathname + "\n" + document.body.innerText`))
	return s
}

func (b *browser) open(path string) { b.t.Helper(); b.openURL(b.base + path) }
func (b *browser) openURL(url string) {
	b.t.Helper()
	b.do("open "+url, chromedp.Navigate(url))
}
func (b *browser) click(sel string) {
	b.t.Helper()
	b.do("click "+sel, chromedp.Click(chromedp.CSS(sel)))
}
func (b *browser) waitVisible(sel string) {
	b.t.Helper()
	b.do("wait for "+sel, chromedp.WaitVisible(chromedp.CSS(sel)))
}

func (b *browser) fill(sel, value string) {
	b.t.Helper()
	b.do("fill "+sel, chromedp.WaitVisible(chromedp.CSS(sel)), chromedp.SetValue(chromedp.CSS(sel), value))
}

func (b *browser) submit(formSel string) {
	b.t.Helper()
	b.click(formSel + ` button[type="submit"]`)
}

// eval runs an expression (a promise is awaited) and returns its string value.
func (b *browser) eval(js string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserBound)
	defer cancel()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](js, chromedp.EvalAwaitPromise))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v\npage: %s", js, err, b.bodyText())
	}
	return out
}

// waitText waits until the elements matching sel hold want ("": any text).
func (b *browser) waitText(sel, want string) {
	b.t.Helper()
	deadline := time.Now().Add(browserBound)
	js := fmt.Sprintf(`[...document.querySelectorAll(%q)].map(e => e.textContent).join("\n")`, sel)
	var got string
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		cancel()
		got = v
		if err == nil && strings.TrimSpace(got) != "" && strings.Contains(got, want) {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.t.Fatalf("%s never held %q (it holds %q)\npage: %s", sel, want, got, b.bodyText())
}

// shot writes a screenshot of the page.
func (b *browser) shot(name string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, browserBound)
	defer cancel()
	time.Sleep(150 * time.Millisecond) // let the last render settle
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll(b.shots, 0o755); err != nil {
		b.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644); err != nil { //nolint:gosec // documentation images
		b.t.Fatal(err)
	}
}

// waitGone waits until no element matches sel.
func (b *browser) waitGone(sel string) {
	b.t.Helper()
	deadline := time.Now().Add(browserBound)
	js := fmt.Sprintf(`String(document.querySelector(%q) === null)`, sel)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		cancel()
		if err == nil && v == "true" {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	b.t.Fatalf("%s is still on the page\npage: %s", sel, b.bodyText())
}
