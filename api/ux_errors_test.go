package api_test

import (
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
)

// A duplicate name or slug is a 409 that says what already exists, without the
// database constraint's name, and writes nothing.
func TestConflictMessagesSayWhatExists(t *testing.T) {
	t.Parallel()
	e := apitest.New(t, apitest.Options{})
	orgID, guildID, _ := e.Hierarchy()
	org := e.Admin("GET", "/api/orgs/"+orgID, nil).Map()
	guild := e.Admin("GET", "/api/guilds/"+guildID, nil).Map()

	cases := []struct {
		name, path string
		body       map[string]any
		table      string
		want       string
	}{
		{"organisation slug", "/api/orgs", map[string]any{"name": org["name"]}, "organisations", "organisation with this slug"},
		{"guild name", "/api/orgs/" + orgID + "/guilds", map[string]any{"name": guild["name"]}, "guilds", "guild with this name"},
		{"agent name", "/api/guilds/" + guildID + "/agents", map[string]any{"name": "Dup"}, "agents", "agent with this name"},
	}
	e.Admin("POST", cases[2].path, cases[2].body)
	for _, c := range cases {
		before := e.Count(c.table)
		r := e.Admin("POST", c.path, c.body)
		if r.Status != 409 || r.ErrorCode() != "conflict" {
			t.Fatalf("%s: %d %s", c.name, r.Status, r.Body)
		}
		msg := r.Map()["error"].(map[string]any)["message"].(string)
		if !strings.Contains(msg, c.want) || strings.Contains(msg, "_key") {
			t.Errorf("%s: message %q", c.name, msg)
		}
		if n := e.Count(c.table); n != before {
			t.Errorf("%s: %s went from %d to %d rows", c.name, c.table, before, n)
		}
	}
}
