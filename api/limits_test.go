package api_test

import (
	"strings"
	"testing"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
)

// An organisation holds at most GUILDS_MAX_AGENTS_PER_ORG agents, counted
// over all its guilds; the next one is refused with a 409 naming the setting,
// and another organisation is not affected.
func TestAgentsPerOrganisationAreCapped(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{Tweak: func(d *api.Deps) { d.MaxAgentsPerOrg = 2 }})
	orgID, _, _ := e.Hierarchy() // the first agent
	r := e.Admin("POST", "/api/orgs/"+orgID+"/guilds", map[string]any{"name": "Second guild"})
	if r.Status != 201 {
		t.Fatalf("guild: %d %s", r.Status, r.Body)
	}
	second := r.Map()["id"].(string)
	if r := e.Admin("POST", "/api/guilds/"+second+"/agents", map[string]any{"name": "Two"}); r.Status != 201 {
		t.Fatalf("second agent: %d %s", r.Status, r.Body)
	}
	r = e.Admin("POST", "/api/guilds/"+second+"/agents", map[string]any{"name": "Three"})
	if r.Status != 409 || r.ErrorCode() != "agent_limit_reached" || !strings.Contains(string(r.Body), "GUILDS_MAX_AGENTS_PER_ORG") {
		t.Fatalf("third agent: %d %s", r.Status, r.Body)
	}
	if n := e.Count("agents"); n != 2 {
		t.Fatalf("agents stored: %d", n)
	}
	r = e.Admin("POST", "/api/orgs", map[string]any{"name": "Another"})
	other := r.Map()["id"].(string)
	r = e.Admin("POST", "/api/orgs/"+other+"/guilds", map[string]any{"name": "G"})
	if r := e.Admin("POST", "/api/guilds/"+r.Map()["id"].(string)+"/agents", map[string]any{"name": "A"}); r.Status != 201 {
		t.Fatalf("another organisation's agent: %d %s", r.Status, r.Body)
	}
}
