package api_test

import (
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/apitest"
)

// TestGuildExtraGitURLs: an operator adds a guild's extra git URL (the
// name from the URL when none is given), lists it, and removes it; bad URLs
// are refused field by field, and another organisation sees no guild.
func TestGuildExtraGitURLs(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	org, guild, _ := e.Hierarchy()
	op := e.Operator(org)
	path := "/api/guilds/" + guild + "/repositories"

	for _, bad := range []struct {
		body        map[string]any
		field, says string
	}{
		{map[string]any{}, "url", "is required"},
		{map[string]any{"url": "git@host:owner/repo.git"}, "url", "https"},
		{map[string]any{"url": "http://git.example.com/o/r.git"}, "url", "https"},
		{map[string]any{"url": "https://tok:x@git.example.com/o/r.git"}, "url", "password"},
		{map[string]any{"url": "https://git.example.com/"}, "url", "names no repository"},
		{map[string]any{"url": "https://git.example.com/o/r.git", "default_branch": "a..b"}, "default_branch", "branch"},
	} {
		r := e.Do(op, "POST", path, bad.body)
		if r.Status != 422 || !strings.Contains(string(r.Body), `"field":"`+bad.field+`"`) || !strings.Contains(string(r.Body), bad.says) {
			t.Errorf("%v: %d %s", bad.body, r.Status, r.Body)
		}
	}
	r := e.Do(op, "POST", path, map[string]any{"url": "https://git.example.com/acme/tools.git", "default_branch": "trunk"})
	if r.Status != 201 || r.Map()["name"] != "tools" || r.Map()["id"] == "" {
		t.Fatalf("add: %d %s", r.Status, r.Body)
	}
	id := r.Map()["id"].(string)
	if r := e.Do(op, "POST", path, map[string]any{"url": "https://git.example.com/acme/tools.git"}); r.Status != 409 {
		t.Fatalf("twice: %d %s", r.Status, r.Body)
	}
	var list struct {
		Repositories []map[string]any `json:"repositories"`
	}
	e.Do(op, "GET", path, nil).JSON(&list)
	if len(list.Repositories) != 1 || list.Repositories[0]["url"] != "https://git.example.com/acme/tools.git" || list.Repositories[0]["default_branch"] != "trunk" {
		t.Fatalf("list: %+v", list.Repositories)
	}
	org2 := e.Admin("POST", "/api/orgs", map[string]any{"name": "Other"}).Map()["id"].(string)
	if r := e.Do(e.Operator(org2), "POST", path, map[string]any{"url": "https://git.example.com/x/y"}); r.Status != 404 {
		t.Fatalf("another organisation: %d %s", r.Status, r.Body)
	}
	if r := e.Do(e.Operator(org2), "DELETE", path+"/"+id, nil); r.Status != 404 {
		t.Fatalf("another organisation's delete: %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "DELETE", path+"/"+id, nil); r.Status != 204 || e.Count("guild_repositories") != 0 {
		t.Fatalf("remove: %d %s", r.Status, r.Body)
	}
	if r := e.Do(op, "DELETE", path+"/"+id, nil); r.Status != 404 {
		t.Fatalf("remove twice: %d %s", r.Status, r.Body)
	}
}
