package browserops

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// A frame of another site runs in another process (site isolation): the
// snapshot names its URL instead of its content.
func TestCrossSiteFrameIsNamedByItsURL(t *testing.T) {
	cfg := hostBrowser(t)
	srv := fixtures(t)
	other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/inner.html"
	outer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`<title>Outer</title><h1>Outer</h1><iframe title="Other" src="` + other + `"></iframe>`))
	}))
	defer outer.Close()
	ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": outer.URL}))
	snap := ok(t, call(t, cfg, ToolSnapshot, nil))
	if !strings.Contains(snap, `iframe "Other" src=`+other+` (another site`) {
		t.Errorf("snapshot:\n%s", snap)
	}
}
