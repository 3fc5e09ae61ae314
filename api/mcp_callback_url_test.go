package api_test

import (
	"strings"
	"testing"

	"github.com/guilds/guilds/api"
)

// The OAuth redirect goes to PUBLIC_BASE_URL when the box has one (providers such
// as Notion refuse non-loopback http redirects), else to the host the operator used.
func TestOAuthCallbackURL(t *testing.T) {
	for _, public := range []string{"", "https://guilds.example.com"} {
		t.Run("public="+public, func(t *testing.T) {
			me := newMCPEnv(t, true, nil) // each subtest has its own task queue
			oauthFixture(t, me)
			me.Server.PublicBaseURL = public
			org, _, _ := me.Hierarchy()
			_, authURL := me.connectOAuth(t, "organisation", org)
			want := strings.TrimRight(me.HTTP.URL, "/") + api.CallbackPath
			if public != "" {
				want = public + api.CallbackPath
			}
			if got := mustQuery(t, authURL).Get("redirect_uri"); got != want {
				t.Fatalf("redirect_uri %q, want %q", got, want)
			}
		})
	}
}
