package api_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
)

// appRequest sends a request as the operator app does: cookies, and the CSRF header when csrf is set.
func appRequest(t *testing.T, e *apitest.Env, cookies []*http.Cookie, csrf, method, path string, body any) (int, []byte, *http.Response) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, e.HTTP.URL+path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, c := range cookies {
		req.AddCookie(c)
	}
	if csrf != "" {
		req.Header.Set("X-CSRF-Token", csrf)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, resp
}

func signIn(t *testing.T, e *apitest.Env, token string) ([]*http.Cookie, string) {
	t.Helper()
	status, raw, resp := appRequest(t, e, nil, "", "POST", "/api/session", map[string]any{"token": token})
	if status != http.StatusCreated {
		t.Fatalf("sign in: %d %s", status, raw)
	}
	var reply struct {
		CSRF string `json:"csrf_token"`
	}
	_ = json.Unmarshal(raw, &reply)
	return resp.Cookies(), reply.CSRF
}

func TestAppSessionCookieCSRFAndSignOut(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	cookies, csrf := signIn(t, e, e.AdminToken)
	var session *http.Cookie
	for _, c := range cookies {
		if c.Name == "guilds_session" {
			session = c
		}
	}
	if session == nil || !session.HttpOnly || session.SameSite != http.SameSiteStrictMode || csrf == "" {
		t.Fatalf("session cookie %+v csrf %q", session, csrf)
	}
	if strings.Contains(session.Value, e.AdminToken) {
		t.Fatal("the cookie carries the API token")
	}
	if st, raw, _ := appRequest(t, e, cookies, "", "GET", "/api/orgs", nil); st != 200 {
		t.Fatalf("GET with the cookie: %d %s", st, raw)
	}
	// A mutating request with the cookie but without (or with a wrong) CSRF token is refused and writes nothing.
	before := e.Count("organisations")
	for _, bad := range []string{"", "forged"} {
		st, raw, _ := appRequest(t, e, cookies, bad, "POST", "/api/orgs", map[string]any{"name": "X"})
		if st != http.StatusForbidden || !strings.Contains(string(raw), "csrf_required") {
			t.Fatalf("POST without CSRF (%q): %d %s", bad, st, raw)
		}
	}
	if e.Count("organisations") != before {
		t.Fatal("a refused request wrote an organisation")
	}
	if st, raw, _ := appRequest(t, e, cookies, csrf, "POST", "/api/orgs", map[string]any{"name": "X"}); st != 201 {
		t.Fatalf("POST with CSRF: %d %s", st, raw)
	}
	// Bearer tokens are unchanged.
	if r := e.Admin("GET", "/api/session", nil); r.Status != 200 || r.Map()["admin"] != true {
		t.Fatalf("GET /api/session with a token: %d %s", r.Status, r.Body)
	}
	if st, raw, _ := appRequest(t, e, cookies, "", "DELETE", "/api/session", nil); st != http.StatusForbidden {
		t.Fatalf("sign out without CSRF: %d %s", st, raw)
	}
	if st, raw, _ := appRequest(t, e, cookies, csrf, "DELETE", "/api/session", nil); st != http.StatusNoContent {
		t.Fatalf("sign out: %d %s", st, raw)
	}
	if st, raw, _ := appRequest(t, e, cookies, "", "GET", "/api/orgs", nil); st != http.StatusUnauthorized || !strings.Contains(string(raw), "session_expired") {
		t.Fatalf("GET after sign out: %d %s", st, raw)
	}
}

func TestAppSessionRefusesBadTokensAndEndsWithItsToken(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	st, raw, _ := appRequest(t, e, nil, "", "POST", "/api/session", map[string]any{"token": ""})
	if st != 422 || !strings.Contains(string(raw), `"field":"token"`) {
		t.Fatalf("empty token: %d %s", st, raw)
	}
	if st, raw, _ = appRequest(t, e, nil, "", "POST", "/api/session", map[string]any{"token": "gld_nope"}); st != 401 {
		t.Fatalf("unknown token: %d %s", st, raw)
	}
	orgID, _, _ := e.Hierarchy()
	op := e.Operator(orgID)
	cookies, _ := signIn(t, e, op)
	tokens := e.Do(op, "GET", "/api/tokens", nil)
	var list []map[string]any
	tokens.JSON(&list)
	if r := e.Admin("DELETE", "/api/tokens/"+list[0]["id"].(string), nil); r.Status >= 300 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if st, raw, _ := appRequest(t, e, cookies, "", "GET", "/api/orgs", nil); st != 401 || !strings.Contains(string(raw), "token_revoked") {
		t.Fatalf("session after its token was revoked: %d %s", st, raw)
	}
}

func TestAppSessionOfOneOrganisationSeesNoOther(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	orgA, _, _ := e.Hierarchy()
	orgB := e.Admin("POST", "/api/orgs", map[string]any{"name": "Org B"}).Map()["id"].(string)
	cookies, _ := signIn(t, e, e.Operator(orgA))
	_, raw, _ := appRequest(t, e, cookies, "", "GET", "/api/orgs", nil)
	if strings.Contains(string(raw), orgB) || !strings.Contains(string(raw), orgA) {
		t.Fatalf("orgs of A's session: %s", raw)
	}
	if st, _, _ := appRequest(t, e, cookies, "", "GET", "/api/orgs/"+orgB+"/guilds", nil); st != 404 {
		t.Fatalf("B's guilds from A's session: %d", st)
	}
}

func TestAppIsServedBesideTheAPI(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	for _, path := range []string{"/", "/orgs/x/tools", "/app.js"} {
		req, _ := http.NewRequest("GET", e.HTTP.URL+path, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		csp := resp.Header.Get("Content-Security-Policy")
		if resp.StatusCode != 200 || !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe-inline") ||
			resp.Header.Get("Content-Encoding") != "gzip" || resp.Header.Get("ETag") == "" {
			t.Fatalf("%s: %d %v", path, resp.StatusCode, resp.Header)
		}
	}
	// API paths keep their JSON errors.
	if r := e.Do("", "GET", "/api/nope", nil); r.Status != 404 || r.ErrorCode() != "not_found" {
		t.Fatalf("/api/nope: %d %s", r.Status, r.Body)
	}
}

// TestAppClientMatchesTheRouteTable fails when a route was added or changed
// without regenerating the app's client (go generate ./internal/webapp).
func TestAppClientMatchesTheRouteTable(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	committed, err := os.ReadFile("../internal/webapp/assets/api.gen.js")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed, e.Server.ClientJS()) {
		t.Fatal("internal/webapp/assets/api.gen.js is stale: run go generate ./internal/webapp")
	}
}

// Outside loopback the session cookies are Secure; a sign-in posted by
// another site's page is refused.
func TestAppSessionCookieIsSecureOutsideLoopbackAndRefusesOtherSites(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	post := func(host, origin string) *http.Response {
		req, _ := http.NewRequest("POST", e.HTTP.URL+"/api/session", strings.NewReader(`{"token":"`+e.AdminToken+`"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Host = host
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp
	}
	resp := post("guilds.example.com", "https://guilds.example.com")
	if resp.StatusCode != http.StatusCreated || len(resp.Cookies()) != 2 {
		t.Fatalf("sign in: %d %v", resp.StatusCode, resp.Cookies())
	}
	for _, c := range resp.Cookies() {
		if !c.Secure || c.SameSite != http.SameSiteStrictMode {
			t.Errorf("cookie %s outside loopback: %+v", c.Name, c)
		}
	}
	if resp := post("guilds.example.com", "https://evil.example"); resp.StatusCode != http.StatusForbidden {
		t.Fatalf("sign in from another site: %d", resp.StatusCode)
	}
}
