package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
)

// A browser landing on the OAuth callback is sent to the app's page that
// says what happened; the code and state never reach that page's URL.
func TestAppOAuthCallbackLandsABrowserOnTheAppPage(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, _ := http.NewRequest("GET", e.HTTP.URL+"/api/mcp/oauth/callback?state=forged-state&code=secret-code-123", nil)
	req.Header.Set("Sec-Fetch-Mode", "navigate")
	req.Header.Set("Accept", "text/html")
	resp, err := noFollow.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/connected?") ||
		!strings.Contains(loc, "result=refused") || !strings.Contains(loc, "reason=invalid_state") {
		t.Fatalf("browser callback: %d %q", resp.StatusCode, loc)
	}
	if strings.Contains(loc, "secret-code-123") || strings.Contains(loc, "forged-state") {
		t.Fatalf("the landing URL carries the code or state: %q", loc)
	}
	// A non-browser caller still gets the JSON error.
	if r := e.Do("", "GET", "/api/mcp/oauth/callback?state=forged&code=x", nil); r.Status != 400 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("API callback: %d %s", r.Status, r.Body)
	}
}
