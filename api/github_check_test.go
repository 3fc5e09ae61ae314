package api_test

import (
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/githubapp/githubtest"
)

// TestGitHubAppCheckSaysWhatIsWrong: Admin reads the App's registration
// from GitHub with its JWT; a registration as the guide says passes, and
// each difference is named with what to change.
func TestGitHubAppCheckSaysWhatIsWrong(t *testing.T) {
	gh := githubtest.New(t)
	e := apitest.New(t, apitest.Options{Env: gh.Env()})
	type reply struct {
		OK       bool                `json:"ok"`
		Problems []map[string]string `json:"problems"`
		Callback string              `json:"callback_url"`
		Confirm  []string            `json:"confirm"`
		App      struct {
			Slug string `json:"slug"`
		} `json:"app"`
	}
	check := func() reply {
		t.Helper()
		r := e.Admin("GET", "/api/admin/github/app", nil)
		var out reply
		r.JSON(&out)
		if r.Status != 200 {
			t.Fatalf("check: %d %s", r.Status, r.Body)
		}
		return out
	}
	got := check()
	if !got.OK || len(got.Problems) != 0 || got.App.Slug != gh.Slug || !strings.HasSuffix(got.Callback, "/api/mcp/oauth/callback") || len(got.Confirm) == 0 {
		t.Fatalf("a registration as the guide says: %+v", got)
	}

	gh.Permissions = map[string]string{"contents": "read", "metadata": "read", "issues": "write"}
	gh.Events = []string{"push"}
	got = check()
	fields := map[string]string{}
	for _, p := range got.Problems {
		fields[p["field"]] = p["message"]
	}
	if got.OK || !strings.Contains(fields["permissions.contents"], "needs write") || !strings.Contains(fields["permissions.pull_requests"], "lacks") ||
		!strings.Contains(fields["permissions"], "issues") || !strings.Contains(fields["events"], "Webhook off") {
		t.Fatalf("a wrong registration: %+v", got.Problems)
	}

	// A key of another App: GitHub refuses the JWT, and the check says which variables.
	other := githubtest.New(t)
	env := gh.Env()
	env["GITHUB_APP_PRIVATE_KEY"] = other.Env()["GITHUB_APP_PRIVATE_KEY"]
	e2 := apitest.New(t, apitest.Options{Env: env})
	r := e2.Admin("GET", "/api/admin/github/app", nil)
	if r.Status != 200 || !strings.Contains(string(r.Body), `"field":"jwt"`) {
		t.Fatalf("another App's key: %d %s", r.Status, r.Body)
	}
	// Without the App: the variables to set.
	e3 := apitest.New(t, apitest.Options{})
	if r := e3.Admin("GET", "/api/admin/github/app", nil); r.Status != 422 || r.ErrorCode() != "not_set_up" {
		t.Fatalf("no App: %d %s", r.Status, r.Body)
	}
	// Not for a non-admin.
	org, _, _ := e.Hierarchy()
	if r := e.Do(e.Operator(org), "GET", "/api/admin/github/app", nil); r.Status != 403 {
		t.Fatalf("non-admin: %d %s", r.Status, r.Body)
	}
}
