package api_test

import (
	"context"
	"io/fs"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/sandbox"
)

// nullWorkspace is a sandbox where every command succeeds: enough for a
// generation start to request its tokens.
type nullWorkspace struct {
	mu    sync.Mutex
	files map[string][]byte
}

func (w *nullWorkspace) Exec(context.Context, string, sandbox.ExecRequest) (sandbox.ExecResult, error) {
	return sandbox.ExecResult{}, nil
}

func (w *nullWorkspace) CopyTo(_ context.Context, _, path string, content []byte, _ fs.FileMode) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.files == nil {
		w.files = map[string][]byte{}
	}
	w.files[path] = content
	return nil
}

func issuedTokenKeyring(t *testing.T) *secret.Keyring {
	t.Helper()
	k, err := secret.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// A user with read on one repository (and push on another) of another
// account's installation attaches it: the login offers and accepts only
// those two, and a coding generation gets a write token for the one the
// user can push to and a read token for the other, never more.
func TestGitHubReachingAnInstallationIsNotAuthorityOverItsRepositories(t *testing.T) {
	e := newGitHubEnv(t, true)
	org, guild, agent := e.Hierarchy()
	inst := e.gh.AddInstallation("victim-gh")
	secret := e.gh.AddRepo(t, inst, "victim-gh", "secret")
	docs := e.gh.AddRepo(t, inst, "victim-gh", "docs")
	tools := e.gh.AddRepo(t, inst, "victim-gh", "tools")
	e.gh.Grant("mallory", docs, "pull")
	e.gh.Grant("mallory", tools, "push")

	id, u := e.connect(t, e.browser, "guild", guild)
	q := url.Values{"code": {e.gh.Code("mallory")}, "installation_id": {strconv.FormatInt(inst, 10)}, "setup_action": {"install"},
		"state": {u.Query().Get("state")}}
	if r := e.callback(t, callbackPath(q)); r.Status != 200 || e.status(t, id) != "connected" {
		t.Fatalf("callback: %d %s", r.Status, r.Body)
	}

	r := e.Admin("GET", "/api/mcp/connections/"+id+"/github/repositories", nil)
	var repos []map[string]any
	r.JSON(&repos)
	got := map[string]any{}
	for _, x := range repos {
		got[x["full_name"].(string)] = x["permission"]
	}
	if r.Status != 200 || len(got) != 2 || got["victim-gh/docs"] != "read" || got["victim-gh/tools"] != "write" {
		t.Fatalf("repositories: %d %s", r.Status, r.Body)
	}
	r = e.Admin("PUT", "/api/mcp/connections/"+id+"/github/selected", map[string]any{"repositories": []map[string]any{
		{"url": e.gh.URL + "/victim-gh/secret"}}})
	if r.Status != 422 || !strings.Contains(string(r.Body), "repositories[0].url") {
		t.Fatalf("a repository the user does not reach: %d %s", r.Status, r.Body)
	}
	r = e.Admin("PUT", "/api/mcp/connections/"+id+"/github/selected", map[string]any{"repositories": []map[string]any{
		{"url": e.gh.URL + "/victim-gh/docs"}, {"url": e.gh.URL + "/victim-gh/tools"}}})
	if r.Status != 200 {
		t.Fatalf("select: %d %s", r.Status, r.Body)
	}

	cfg := e.gh.Config()
	g := &githubapp.Generations{DB: e.DB, Workspace: &nullWorkspace{}, Keyring: issuedTokenKeyring(t),
		App: func() (*githubapp.Client, error) { return &githubapp.Client{Config: cfg}, nil }}
	before := len(e.gh.TokenRequests) // the listings' metadata tokens stay in the orchestrator
	if _, err := g.Prepare(context.Background(), githubapp.Agent{ID: agent, GuildID: guild, OrgID: org}); err != nil {
		t.Fatal(err)
	}
	var writes, reads []int64
	for _, call := range e.gh.TokenRequests[before:] {
		ids := call.Request.RepositoryIDs
		if len(ids) == 0 || slices.Contains(ids, secret) {
			t.Fatalf("a token beyond what the user reaches: %+v", call.Request)
		}
		switch {
		case call.Request.Permissions["contents"] == "write" || call.Request.Permissions["pull_requests"] == "write":
			writes = append(writes, ids...)
		case call.Request.Permissions["contents"] == "read":
			reads = append(reads, ids...)
		}
	}
	if !slices.Equal(writes, []int64{tools}) || !slices.Equal(reads, []int64{docs}) {
		t.Fatalf("write tokens for %v, read tokens for %v (tools %d, docs %d)", writes, reads, tools, docs)
	}
}

// An installation one organisation of the box holds is attached to a
// second organisation only after an instance admin approves it.
func TestGitHubSecondOrganisationWaitsForAnInstanceAdmin(t *testing.T) {
	e := newGitHubEnv(t, true)
	org, _, _ := e.Hierarchy()
	inst := e.gh.AddInstallation("acme-gh")
	e.gh.AddRepo(t, inst, "acme-gh", "api")
	e.gh.AddUser("octo", inst)
	attach := func(orgID string) (string, int, string) {
		t.Helper()
		id, u := e.connect(t, e.browser, "organisation", orgID)
		q := url.Values{"code": {e.gh.Code("octo")}, "installation_id": {strconv.FormatInt(inst, 10)}, "setup_action": {"install"},
			"state": {u.Query().Get("state")}}
		r := e.callback(t, callbackPath(q))
		return id, r.Status, r.ErrorCode()
	}
	if id, st, code := attach(org); st != 200 || e.status(t, id) != "connected" {
		t.Fatalf("first organisation: %d %s", st, code)
	}

	r := e.Admin("POST", "/api/orgs", map[string]any{"name": "Elsewhere"})
	if r.Status != 201 {
		t.Fatalf("second organisation: %d %s", r.Status, r.Body)
	}
	org2 := r.Map()["id"].(string)
	id2, st, code := attach(org2)
	if st != 409 || code != "github_installation_needs_approval" || e.status(t, id2) != "pending" || e.Count("github_logins") != 1 {
		t.Fatalf("second organisation before approval: %d %s, %s", st, code, e.status(t, id2))
	}

	if r := e.Do(e.Operator(org2), "GET", "/api/admin/github/approvals", nil); r.Status != 403 {
		t.Fatalf("an operator lists approvals: %d %s", r.Status, r.Body)
	}
	var list []githubapp.Approval
	r = e.Admin("GET", "/api/admin/github/approvals", nil)
	r.JSON(&list)
	if r.Status != 200 || len(list) != 1 || list[0].OrganisationID != org2 || list[0].Account != "acme-gh" || list[0].ApprovedAt != nil ||
		len(list[0].AttachedTo) != 1 || strings.Contains(string(r.Body), strconv.FormatInt(inst, 10)) {
		t.Fatalf("approvals: %d %s", r.Status, r.Body)
	}
	if r := e.Do(e.Operator(org2), "POST", "/api/admin/github/approvals/"+list[0].ID+"/approve", nil); r.Status != 403 {
		t.Fatalf("an operator approves: %d %s", r.Status, r.Body)
	}
	if r := e.Admin("POST", "/api/admin/github/approvals/"+list[0].ID+"/approve", nil); r.Status != 200 {
		t.Fatalf("approve: %d %s", r.Status, r.Body)
	}
	if id, st, code := attach(org2); id != id2 || st != 200 || e.status(t, id2) != "connected" {
		t.Fatalf("second organisation after approval: %d %s", st, code)
	}
}
