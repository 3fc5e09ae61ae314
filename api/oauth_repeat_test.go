package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"testing"
)

// A callback repeated after its login connected (a reload, a retry after the
// first answer was lost) is answered as the first one was, in JSON and as the
// app's landing page, with no second code exchange and no second token.
// The state still names nothing to another browser, and a state never issued
// is still refused.
func TestOAuthRepeatedCallbackAnswersTheFirstSuccess(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	as := oauthFixture(t, me)
	org, _, _ := me.Hierarchy()
	id, authURL := me.connectOAuth(t, "organisation", org)
	loc := follow(t, authURL)

	first := me.callback(t, loc)
	if first.Status != 200 || first.Map()["status"] != "connected" {
		t.Fatalf("callback: %d %s", first.Status, first.Body)
	}
	again := me.callback(t, loc)
	if again.Status != 200 || !reflect.DeepEqual(again.Map(), first.Map()) {
		t.Fatalf("repeated callback: %d %s, first answered %s", again.Status, again.Body, first.Body)
	}
	if landing := me.navigate(t, loc); landing != "/connected?account=acme.test&connection="+id+"&result=connected" {
		t.Fatalf("repeated callback in a browser lands on %q", landing)
	}
	if n := as.Count("code"); n != 1 {
		t.Fatalf("the authorization server saw %d code exchanges, want 1", n)
	}
	var rows, version int
	if err := me.DB.QueryRow(context.Background(), `SELECT count(*), coalesce(max(version), 0) FROM connection_credentials WHERE connection_id = $1`,
		id).Scan(&rows, &version); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || version != 1 {
		t.Fatalf("the login's token: %d rows, version %d; want it stored once", rows, version)
	}

	if r := me.callbackIn(t, newBrowser(), loc); r.Status != 400 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("the spent state from another browser: %d %s", r.Status, r.Body)
	}
	forged := withQuery(t, loc, "state", "never-issued")
	if r := me.callback(t, forged); r.Status != 400 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("a state never issued, from the starting browser: %d %s", r.Status, r.Body)
	}
	if n := as.Count("code"); n != 1 {
		t.Fatalf("the authorization server saw %d code exchanges after the repeats, want 1", n)
	}
}

// A login the provider refused is not connected by a repeat of its
// callback: a new login is deleted with its refusal, so the repeat names an
// unknown login, and no code is ever exchanged.
func TestOAuthRepeatedCallbackOfADeniedLogin(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	as := oauthFixture(t, me)
	as.Deny = true
	org, _, _ := me.Hierarchy()
	id, authURL := me.connectOAuth(t, "organisation", org)
	loc := follow(t, authURL)
	if r := me.callback(t, loc); r.Status != 422 || r.ErrorCode() != "oauth_denied" {
		t.Fatalf("callback: %d %s", r.Status, r.Body)
	}
	if r := me.callback(t, loc); r.Status != 400 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("repeated callback: %d %s", r.Status, r.Body)
	}
	if me.status(t, id) != "absent" || me.Count("connection_oauth_pending") != 0 || as.Count("code") != 0 {
		t.Fatalf("a denied login left status %s, %d pending, %d code exchanges", me.status(t, id),
			me.Count("connection_oauth_pending"), as.Count("code"))
	}
}

// The operator app's posted callback, repeated from the browser that started
// the login, answers the first success; the same post from elsewhere names
// the state unknown.
func TestOAuthRepeatedPostedCallback(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	as := oauthFixture(t, me)
	org, _, _ := me.Hierarchy()
	_, authURL := me.connectOAuth(t, "organisation", org)
	q := mustQuery(t, follow(t, authURL))
	body, _ := json.Marshal(map[string]string{"state": q.Get("state"), "code": q.Get("code")})
	first := me.doIn(t, me.browser, me.AdminToken, "POST", "/api/mcp/oauth/callback", string(body))
	if first.Status != 200 {
		t.Fatalf("posted callback: %d %s", first.Status, first.Body)
	}
	again := me.doIn(t, me.browser, me.AdminToken, "POST", "/api/mcp/oauth/callback", string(body))
	if again.Status != 200 || !reflect.DeepEqual(again.Map(), first.Map()) {
		t.Fatalf("repeated posted callback: %d %s, first answered %s", again.Status, again.Body, first.Body)
	}
	if r := me.doIn(t, newBrowser(), me.AdminToken, "POST", "/api/mcp/oauth/callback", string(body)); r.Status != 400 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("repeated posted callback without the login's cookie: %d %s", r.Status, r.Body)
	}
	if n := as.Count("code"); n != 1 {
		t.Fatalf("the authorization server saw %d code exchanges, want 1", n)
	}
}

// navigate follows a callback as the starting browser's navigation does and
// returns where the API sends it.
func (me *mcpEnv) navigate(t *testing.T, location string) string {
	t.Helper()
	u, err := url.Parse(location)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("GET", me.HTTP.URL+u.RequestURI(), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Sec-Fetch-Mode", "navigate")
	resp, err := me.browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Fatalf("navigation to the callback: %d", resp.StatusCode)
	}
	return resp.Header.Get("Location")
}

func withQuery(t *testing.T, location, key, value string) string {
	t.Helper()
	u, err := url.Parse(location)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}
