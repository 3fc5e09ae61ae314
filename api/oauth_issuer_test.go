package api_test

import (
	"net/url"
	"strings"
	"testing"
)

// RFC 9207 compares iss with the login's issuer as plain strings: a
// normalised form (a trailing slash added, the host's case changed, a
// default port spelled out) is another issuer, refused before the code is
// redeemed; the exact issuer then completes the login.
func TestOAuthCallbackWithANormalisedIssuerIsRefused(t *testing.T) {
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
	for _, iss := range []string{as.URL + "/", strings.Replace(as.URL, "127.0.0.1", "127.0.0.1.", 1), strings.ToUpper(as.URL), as.URL + "/tenant"} {
		if r := me.callback(t, withIss(iss)); r.Status != 400 || r.ErrorCode() != "oauth_issuer_mismatch" {
			t.Fatalf("iss %q: %d %s", iss, r.Status, r.Body)
		}
		if me.status(t, id) != "pending" || as.Count("code") != 0 {
			t.Fatalf("iss %q touched the login: status %s, code exchanges %d", iss, me.status(t, id), as.Count("code"))
		}
	}
	if r := me.callback(t, withIss(as.URL)); r.Status != 200 || me.status(t, id) != "connected" || as.Count("code") != 1 {
		t.Fatalf("the login's issuer: %d %s", r.Status, r.Body)
	}
}
