package browserops

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A frame of another site runs in another process (site isolation): its
// tree is read over its own target, and its references (f1e…) click, type
// and fill inside it.
func TestCrossSiteFrameIsSnapshotAndActedOn(t *testing.T) {
	cfg := hostBrowser(t)
	srv := fixtures(t)
	other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`<title>Outer</title><h1>Outer</h1><p style="height:300px">spacer</p>` +
			`<iframe title="Button" src="` + other + `/inner.html" width="400" height="120"></iframe>` +
			`<iframe title="Form" src="` + other + `/form.html" width="600" height="500"></iframe>`))
	}))
	defer outer.Close()
	ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": outer.URL}))
	snap := ok(t, call(t, cfg, ToolSnapshot, nil))
	press := refOf(t, snap, `button "Press me"`)
	if !strings.HasPrefix(press, "f") {
		t.Fatalf("a ref in a frame of another site: %s\n%s", press, snap)
	}
	ok(t, call(t, cfg, ToolType, map[string]any{"ref": refOf(t, snap, `textbox "Name"`), "text": "Ada"}))
	ok(t, call(t, cfg, ToolFill, map[string]any{"ref": refOf(t, snap, `textbox "Email"`), "value": "ada@example.com"}))
	ok(t, call(t, cfg, ToolClick, map[string]any{"ref": refOf(t, snap, `button "Create account"`)}))
	ok(t, call(t, cfg, ToolClick, map[string]any{"ref": press}))
	after := ok(t, call(t, cfg, ToolSnapshot, nil))
	if !strings.Contains(after, `button "Pressed"`) || !strings.Contains(after, "Welcome Ada <ada@example.com>") {
		t.Errorf("the actions in the frames did not land:\n%s", after)
	}
	if got := call(t, cfg, ToolClick, map[string]any{"ref": "f9e1"}); !strings.Contains(got, "is not in the last snapshot") {
		t.Errorf("a frame the snapshot did not have: %s", got)
	}
}
