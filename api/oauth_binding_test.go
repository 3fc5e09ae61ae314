package api_test

import (
	"encoding/json"
	"net/url"
	"testing"
)

// A callback from a browser that did not click Connect is refused, and the
// login is left waiting: the starting browser then completes it.
func TestOAuthCallbackFromAnotherBrowserIsRefused(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	as := oauthFixture(t, me)
	org, _, _ := me.Hierarchy()
	id, authURL := me.connectOAuth(t, "organisation", org)
	loc := follow(t, authURL)

	if r := me.callbackIn(t, newBrowser(), loc); r.Status != 403 || r.ErrorCode() != "oauth_other_browser" {
		t.Fatalf("another browser: %d %s", r.Status, r.Body)
	}
	if me.status(t, id) != "pending" || me.Count("connection_oauth_pending") != 1 || as.Count("code") != 0 {
		t.Fatalf("a refused callback touched the login: status %s, code exchanges %d", me.status(t, id), as.Count("code"))
	}
	if r := me.callback(t, loc); r.Status != 200 || me.status(t, id) != "connected" {
		t.Fatalf("starting browser: %d %s", r.Status, r.Body)
	}
}

// The operator app may post code and state back with the API token of the
// user who started the login; any other user is refused.
func TestOAuthPostedCallbackIsForTheStartingUserOnly(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	oauthFixture(t, me)
	org, _, _ := me.Hierarchy()
	id, authURL := me.connectOAuth(t, "organisation", org)
	q := mustQuery(t, follow(t, authURL))
	body, _ := json.Marshal(map[string]string{"state": q.Get("state"), "code": q.Get("code")})

	op := me.Operator(org)
	if r := me.doIn(t, newBrowser(), op, "POST", "/api/mcp/oauth/callback", string(body)); r.Status != 403 || r.ErrorCode() != "oauth_other_user" {
		t.Fatalf("another user: %d %s", r.Status, r.Body)
	}
	if me.status(t, id) != "pending" {
		t.Fatalf("a refused callback touched the login: %s", me.status(t, id))
	}
	if r := me.doIn(t, newBrowser(), me.AdminToken, "POST", "/api/mcp/oauth/callback", string(body)); r.Status != 200 || me.status(t, id) != "connected" {
		t.Fatalf("starting user: %d %s", r.Status, r.Body)
	}
}

// RFC 9207: an iss naming another authorization server than the login's is
// refused; the login's own issuer is accepted.
func TestOAuthCallbackWithAnotherIssuerIsRefused(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	as := oauthFixture(t, me)
	org, _, _ := me.Hierarchy()
	id, authURL := me.connectOAuth(t, "organisation", org)
	loc := follow(t, authURL)
	withIss := func(iss string) string {
		u, _ := url.Parse(loc)
		q := u.Query()
		q.Set("iss", iss)
		u.RawQuery = q.Encode()
		return u.String()
	}
	if r := me.callback(t, withIss("https://attacker.example")); r.Status != 400 || r.ErrorCode() != "oauth_issuer_mismatch" {
		t.Fatalf("another issuer: %d %s", r.Status, r.Body)
	}
	if me.status(t, id) != "pending" {
		t.Fatalf("a refused callback touched the login: %s", me.status(t, id))
	}
	if r := me.callback(t, withIss(as.URL)); r.Status != 200 || me.status(t, id) != "connected" {
		t.Fatalf("the login's issuer: %d %s", r.Status, r.Body)
	}
}

// RFC 9207 2.4: where the authorization server says it always sends iss, a
// callback without one is refused, and the login stays as it was.
func TestOAuthCallbackWithoutIssIsRefusedWhereTheServerAlwaysSendsIt(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	as := oauthFixture(t, me)
	as.SendsIss = true
	org, _, _ := me.Hierarchy()
	id, authURL := me.connectOAuth(t, "organisation", org)
	loc := follow(t, authURL)
	u, _ := url.Parse(loc)
	q := u.Query()
	if q.Get("iss") != as.URL {
		t.Fatalf("the authorization server sent no iss: %s", loc)
	}
	q.Del("iss")
	u.RawQuery = q.Encode()
	if r := me.callback(t, u.String()); r.Status != 400 || r.ErrorCode() != "oauth_issuer_missing" {
		t.Fatalf("callback without iss: %d %s", r.Status, r.Body)
	}
	if me.status(t, id) != "pending" {
		t.Fatalf("a refused callback touched the login: %s", me.status(t, id))
	}
	if r := me.callback(t, loc); r.Status != 200 || me.status(t, id) != "connected" {
		t.Fatalf("the callback with iss: %d %s", r.Status, r.Body)
	}
}
