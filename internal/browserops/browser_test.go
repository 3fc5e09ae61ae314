package browserops

import (
	"image/jpeg"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormFillTypeClickOnRealChromium(t *testing.T) {
	cfg := hostBrowser(t)
	srv := fixtures(t)
	nav := ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": srv.URL + "/form.html"}))
	if !strings.Contains(nav, "(HTTP 200)") || !strings.Contains(nav, `"Sign up"`) {
		t.Fatalf("navigate: %s", nav)
	}
	snap := ok(t, call(t, cfg, ToolSnapshot, nil))
	t.Logf("snapshot:\n%s", snap)
	name := refOf(t, snap, `textbox "Name"`)
	email := refOf(t, snap, `textbox "Email"`)
	country := refOf(t, snap, `combobox "Country"`)
	terms := refOf(t, snap, `checkbox "I accept the terms"`)
	submit := refOf(t, snap, `button "Create account"`)
	if !strings.Contains(snap, "France") || !strings.Contains(snap, "h1 \"Sign up\"") {
		t.Errorf("snapshot lacks the options or the heading:\n%s", snap)
	}
	if got := ok(t, call(t, cfg, ToolType, map[string]any{"ref": name, "text": "Ada"})); !strings.Contains(got, `its value is now "Ada"`) {
		t.Errorf("type: %s", got)
	}
	ok(t, call(t, cfg, ToolFill, map[string]any{"ref": email, "value": "ada@example.com"}))
	if got := ok(t, call(t, cfg, ToolFill, map[string]any{"ref": country, "value": "Spain"})); !strings.Contains(got, `"Spain"`) {
		t.Errorf("fill select: %s", got)
	}
	ok(t, call(t, cfg, ToolFill, map[string]any{"ref": terms, "value": "true"}))
	if got := call(t, cfg, ToolFill, map[string]any{"ref": country, "value": "Mars"}); !strings.Contains(got, `has no option "Mars"`) {
		t.Errorf("fill with a missing option: %s", got)
	}
	ok(t, call(t, cfg, ToolClick, map[string]any{"ref": submit}))
	out := ok(t, call(t, cfg, ToolEval, map[string]any{"script": "return document.getElementById('out').textContent"}))
	if out != `"Welcome Ada \u003cada@example.com\u003e from es (terms accepted)"` && out != `"Welcome Ada <ada@example.com> from es (terms accepted)"` {
		t.Errorf("the form did not submit what was filled: %s", out)
	}
	after := ok(t, call(t, cfg, ToolSnapshot, nil))
	if !strings.Contains(after, `value="ada@example.com"`) || !strings.Contains(after, "checked") {
		t.Errorf("snapshot after filling:\n%s", after)
	}
}

func TestBadInputIsAClearErrorLine(t *testing.T) {
	cfg := hostBrowser(t)
	srv := fixtures(t)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{ToolNavigate, map[string]any{"url": "not a url"}, "ERROR: url: "},
		{ToolNavigate, map[string]any{"url": "ftp://example.com/"}, "only http and https"},
		{ToolNavigate, map[string]any{"url": "example.com"}, "has no scheme"},
		{ToolScroll, map[string]any{"direction": "sideways"}, `ERROR: direction: "sideways" is not a direction`},
		{ToolClick, map[string]any{"ref": "button"}, `ERROR: ref: "button" is not a reference`},
		{ToolClick, map[string]any{"ref": "e99999"}, "ERROR: ref e99999: there is no snapshot"},
	} {
		if got := call(t, cfg, c.tool, c.args); !strings.Contains(got, c.want) {
			t.Errorf("%s %v: %s (want %q)", c.tool, c.args, got, c.want)
		}
	}
	ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": srv.URL + "/form.html"}))
	ok(t, call(t, cfg, ToolSnapshot, nil))
	if got := call(t, cfg, ToolClick, map[string]any{"ref": "e99999"}); !strings.Contains(got, "is not in the last snapshot; take a fresh browser_snapshot") {
		t.Errorf("unknown ref: %s", got)
	}
	if got := call(t, cfg, ToolEval, map[string]any{"script": "return ((("}); !strings.HasPrefix(got, "ERROR: script does not parse: SyntaxError") {
		t.Errorf("eval of code that does not parse: %s", got)
	}
	if got := call(t, cfg, ToolEval, map[string]any{"script": "throw new Error('boom')"}); got != "ERROR: the script threw: Error: boom" {
		t.Errorf("eval that throws: %s", got)
	}
	if got := call(t, cfg, ToolEval, map[string]any{"script": "return document.body"}); !strings.Contains(got, "ERROR: the script's value is not JSON-serialisable: a DOM body node") {
		t.Errorf("eval of a node: %s", got)
	}
	if got := call(t, cfg, ToolEval, map[string]any{"script": "const a = {}; a.a = a; return a"}); !strings.Contains(got, "not JSON-serialisable") {
		t.Errorf("eval of a cycle: %s", got)
	}
	if got := ok(t, call(t, cfg, ToolEval, map[string]any{"script": "await new Promise(r => setTimeout(r, 10)); return {n: 1 + 1, t: document.title}"})); got != `{"n":2,"t":"Sign up"}` {
		t.Errorf("async eval: %s", got)
	}
	if got := call(t, cfg, ToolNavigate, map[string]any{"url": srv.URL + "/missing"}); !strings.Contains(got, "ERROR: "+srv.URL+"/missing answered HTTP 404") {
		t.Errorf("404: %s", got)
	}
	if got := call(t, cfg, ToolNavigate, map[string]any{"url": "http://no-such-host.invalid/"}); !strings.Contains(got, "DNS: the host name no-such-host.invalid does not resolve") {
		t.Errorf("DNS: %s", got)
	}
	if got := call(t, cfg, ToolNavigate, map[string]any{"url": "https://" + strings.TrimPrefix(srv.URL, "http://") + "/"}); !strings.Contains(got, "TLS") {
		t.Errorf("TLS against a plain HTTP server: %s", got)
	}
}

func TestPanelScrollDialogFrameAndChange(t *testing.T) {
	cfg := hostBrowser(t)
	srv := fixtures(t)

	ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": srv.URL + "/panel.html"}))
	snap := ok(t, call(t, cfg, ToolSnapshot, nil))
	panel := refOf(t, snap, "scrollable")
	got := ok(t, call(t, cfg, ToolScroll, map[string]any{"direction": "down"}))
	if !strings.Contains(got, `scrolled the panel div#list down: y 0 → 200 of`) {
		t.Errorf("scroll without ref picks the panel: %s", got)
	}
	got = ok(t, call(t, cfg, ToolScroll, map[string]any{"direction": "up", "ref": panel}))
	if !strings.Contains(got, "y 200 → 0") {
		t.Errorf("scroll up by ref: %s", got)
	}
	if got := ok(t, call(t, cfg, ToolScroll, map[string]any{"direction": "up"})); !strings.Contains(got, "already as far up") {
		t.Errorf("scroll past the top: %s", got)
	}

	ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": srv.URL + "/dialog.html"}))
	snap = ok(t, call(t, cfg, ToolSnapshot, nil))
	got = ok(t, call(t, cfg, ToolClick, map[string]any{"ref": refOf(t, snap, `button "Delete"`)}))
	if !strings.Contains(got, `(the page showed a dialog: confirm "Really delete?", accepted)`) {
		t.Errorf("click that opens a confirm: %s", got)
	}
	if res := ok(t, call(t, cfg, ToolEval, map[string]any{"script": "return document.getElementById('res').textContent"})); res != `"deleted"` {
		t.Errorf("confirm accepted: %s", res)
	}
	ok(t, call(t, cfg, ToolClick, map[string]any{"ref": refOf(t, snap, `button "Open settings"`)}))
	snap = ok(t, call(t, cfg, ToolSnapshot, nil))
	if !strings.Contains(snap, `dialog "Settings"`) || !strings.Contains(snap, "modal") {
		t.Errorf("the modal dialog is not in the snapshot:\n%s", snap)
	}
	nick := refOf(t, snap, `textbox "Nickname"`)
	ok(t, call(t, cfg, ToolFill, map[string]any{"ref": nick, "value": "ada"}))
	ok(t, call(t, cfg, ToolClick, map[string]any{"ref": refOf(t, snap, `button "Close"`)}))

	ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": srv.URL + "/frame.html"}))
	snap = ok(t, call(t, cfg, ToolSnapshot, nil))
	press := refOf(t, snap, `button "Press me"`)
	ok(t, call(t, cfg, ToolClick, map[string]any{"ref": press}))
	if snap = ok(t, call(t, cfg, ToolSnapshot, nil)); !strings.Contains(snap, `button "Pressed"`) {
		t.Errorf("the click in the iframe did not land:\n%s", snap)
	}

	ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": srv.URL + "/change.html"}))
	snap = ok(t, call(t, cfg, ToolSnapshot, nil))
	more := refOf(t, snap, `button "Load more"`)
	ok(t, call(t, cfg, ToolClick, map[string]any{"ref": more}))
	if got := call(t, cfg, ToolClick, map[string]any{"ref": more}); !strings.Contains(got, "is stale: that element is no longer on the page; take a fresh browser_snapshot") {
		t.Errorf("a removed element's ref: %s", got)
	}
	snap = ok(t, call(t, cfg, ToolSnapshot, nil))
	got = ok(t, call(t, cfg, ToolClick, map[string]any{"ref": refOf(t, snap, `link "Open the inner page in a new tab"`)}))
	if !strings.Contains(got, "it opened a new tab, "+srv.URL+"/inner.html, which the browser tools now drive") {
		t.Errorf("a link to a new tab: %s", got)
	}
	if got := ok(t, call(t, cfg, ToolEval, map[string]any{"script": "return location.pathname"})); got != `"/inner.html"` {
		t.Errorf("after the new tab the tools drive %s", got)
	}
	ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": srv.URL + "/change.html"}))
	ok(t, call(t, cfg, ToolClick, map[string]any{"ref": refOf(t, ok(t, call(t, cfg, ToolSnapshot, nil)), `button "Load more"`)}))
	snap = ok(t, call(t, cfg, ToolSnapshot, nil))
	link := refOf(t, snap, `link "Go to the form"`)
	got = ok(t, call(t, cfg, ToolClick, map[string]any{"ref": link}))
	if !strings.Contains(got, "the page is now "+srv.URL+"/form.html") {
		t.Errorf("a click that navigates: %s", got)
	}
	if got := call(t, cfg, ToolClick, map[string]any{"ref": link}); !strings.Contains(got, "is stale: the page has changed") {
		t.Errorf("a ref from before a navigation: %s", got)
	}
}

func TestScreenshotIsAJPEGOfTheViewport(t *testing.T) {
	cfg := hostBrowser(t)
	srv := fixtures(t)
	ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": srv.URL + "/form.html"}))
	resp := callResp(t, cfg, ToolScreenshot, nil)
	if !strings.Contains(ok(t, resp.Text), "to /home/agent/screenshots/latest.jpg") {
		t.Errorf("screenshot: %s", resp.Text)
	}
	f, err := os.Open(filepath.Join(cfg.Home, "screenshots", "latest.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	img, err := jpeg.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != ViewportWidth || b.Dy() != ViewportHeight {
		t.Errorf("screenshot is %dx%d, want the viewport %dx%d", b.Dx(), b.Dy(), ViewportWidth, ViewportHeight)
	}
}

func TestBrowserStaysUpAcrossCallsAndIsRestartedWhenItDied(t *testing.T) {
	cfg := hostBrowser(t)
	srv := fixtures(t)
	ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": srv.URL + "/form.html"}))
	if got := ok(t, call(t, cfg, ToolEval, map[string]any{"script": "return location.pathname"})); got != `"/form.html"` {
		t.Fatalf("a second call does not see the first one's page: %s", got)
	}
	stopBrowser(cfg)
	if got := ok(t, call(t, cfg, ToolEval, map[string]any{"script": "return location.href"})); got != `"about:blank"` {
		t.Errorf("after the browser died, a call runs on a fresh one: %s", got)
	}
}
