package api_test

import (
	"testing"

	"github.com/guilds/guilds/internal/apitest"
)

// A guild turns its coding agents' way to GitHub off and on again; the
// guild's repositories show it (the generation's side: internal/githubapp
// TestGitHubEgressOffForTheGuild).
func TestGuildTurnsGitHubEgressOff(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	_, guild, _ := e.Hierarchy()
	shown := func() any {
		t.Helper()
		r := e.Admin("GET", "/api/guilds/"+guild+"/repositories", nil)
		if r.Status != 200 {
			t.Fatalf("repositories: %d %s", r.Status, r.Body)
		}
		return r.Map()["github_egress"]
	}
	if got := shown(); got != true {
		t.Fatalf("by default github_egress = %v", got)
	}
	r := e.Admin("PUT", "/api/guilds/"+guild+"/github/egress", map[string]any{"enabled": false})
	if r.Status != 200 || r.Map()["enabled"] != false {
		t.Fatalf("turn off: %d %s", r.Status, r.Body)
	}
	if got := shown(); got != false {
		t.Fatalf("after turning it off: github_egress = %v", got)
	}
	if r := e.Admin("PUT", "/api/guilds/"+guild+"/github/egress", map[string]any{"enabled": true}); r.Status != 200 || shown() != true {
		t.Fatalf("turn on: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("PUT", "/api/guilds/"+guild+"/github/egress", map[string]any{}); r.Status != 422 || r.Map()["error"].(map[string]any)["code"] != "invalid" {
		t.Fatalf("without enabled: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("PUT", "/api/guilds/00000000-0000-0000-0000-000000000000/github/egress", map[string]any{"enabled": false}); r.Status != 404 {
		t.Fatalf("an unknown guild: %d %s", r.Status, r.Body)
	}
}
