package api_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	sdkworker "go.temporal.io/sdk/worker"

	ghacts "github.com/guilds/guilds/activities/githubinstall"
	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/githubapp/githubtest"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/workflows/githubinstall"
)

// ghEnv is the API with a local GitHub as the box's App and a worker
// running the githubinstall workflow.
type ghEnv struct {
	*mcpEnv
	gh *githubtest.Server
}

func newGitHubEnv(t *testing.T, withApp bool, tweaks ...func(*api.Deps)) *ghEnv {
	t.Helper()
	gh := githubtest.New(t)
	env := map[string]string{}
	if withApp {
		env = gh.Env()
	}
	me := &mcpEnv{browser: newBrowser()}
	k, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	me.Env = apitest.New(t, apitest.Options{Env: env, Tweak: func(d *api.Deps) {
		eng, err := connectors.New(context.Background(), connectors.Options{DB: d.DB, Keyring: kr,
			Providers: []connectors.ProviderID{"oauth2"}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(eng.Close)
		me.Temporal = testtemporal.Client(t)
		me.queue = testtemporal.TaskQueue(t)
		d.Temporal = me.Temporal
		d.MCP = api.MCPDeps{Engine: eng, Keyring: kr, TaskQueue: me.queue}
		for _, tw := range tweaks {
			tw(d)
		}
	}})
	ms, err := catalog.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	if err := catalog.Seed(context.Background(), me.DB, ms); err != nil {
		t.Fatal(err)
	}
	reg := integrations.New(func(k string) string { return env[k] })
	w := sdkworker.New(me.Temporal, me.queue, sdkworker.Options{})
	githubinstall.Register(w, &ghacts.Activities{DB: me.DB, Keyring: kr, App: func() (*githubapp.Client, error) {
		cfg, err := githubapp.FromRegistry(reg)
		return &githubapp.Client{Config: cfg}, err
	}})
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Stop)
	return &ghEnv{mcpEnv: me, gh: gh}
}

// connect clicks Connect on the GitHub card in a browser.
func (e *ghEnv) connect(t *testing.T, browser *http.Client, scope, owner string) (string, *url.URL) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"slug": "github", "owner_scope": scope, "owner_id": owner})
	r := e.doIn(t, browser, e.AdminToken, "POST", "/api/mcp/connect", string(body))
	if r.Status != 200 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	m := r.Map()
	u, err := url.Parse(m["authorization_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	return m["connection"].(map[string]any)["id"].(string), u
}

func callbackPath(q url.Values) string { return api.CallbackPath + "?" + q.Encode() }

func TestGitHubConnectWithoutTheAppIsUnsupported(t *testing.T) {
	e := newGitHubEnv(t, false)
	org, _, _ := e.Hierarchy()
	body, _ := json.Marshal(map[string]any{"slug": "github", "owner_scope": "organisation", "owner_id": org})
	r := e.doIn(t, e.browser, e.AdminToken, "POST", "/api/mcp/connect", string(body))
	m := r.Map()
	inner, _ := m["error"].(map[string]any)
	if r.Status != 422 || m["setup_state"] != "unsupported" || inner["setup_state"] != "unsupported" || len(inner["missing_variables"].([]any)) != 5 {
		t.Fatalf("connect: %d %s", r.Status, r.Body)
	}
	if n := e.Count("mcp_connections"); n != 0 {
		t.Fatalf("%d logins stored", n)
	}
}

// Install with the callback's installation id, list and select
// repositories (mirrored into the guild's), then a second guild attaches
// the same installation through user authorization, without installing.
func TestGitHubInstallSelectAndSecondGuildReuses(t *testing.T) {
	e := newGitHubEnv(t, true)
	org, guild, agent := e.Hierarchy()
	inst := e.gh.AddInstallation("acme-gh")
	api1 := e.gh.AddRepo(t, inst, "acme-gh", "api")
	e.gh.AddRepo(t, inst, "acme-gh", "web")
	e.gh.AddUser("octo", inst)

	id, u := e.connect(t, e.browser, "guild", guild)
	if u.Path != "/apps/"+e.gh.Slug+"/installations/new" || u.Query().Get("state") == "" {
		t.Fatalf("install URL %s", u)
	}
	state := u.Query().Get("state")
	// Another browser holding the link cannot complete it.
	q := url.Values{"code": {e.gh.Code("octo")}, "installation_id": {strconv.FormatInt(inst, 10)}, "setup_action": {"install"}, "state": {state}}
	if r := e.callbackIn(t, newBrowser(), callbackPath(q)); r.Status != 403 {
		t.Fatalf("other browser: %d %s", r.Status, r.Body)
	}
	r := e.callback(t, callbackPath(q))
	if r.Status != 200 || r.Map()["account_hint"] != "acme-gh" {
		t.Fatalf("callback: %d %s", r.Status, r.Body)
	}
	if st := e.status(t, id); st != "connected" {
		t.Fatalf("status %s", st)
	}
	// The same state again: unknown.
	if r := e.callback(t, callbackPath(q)); r.Status != 400 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("replay: %d %s", r.Status, r.Body)
	}

	r = e.Admin("GET", "/api/mcp/connections/"+id+"/github/repositories", nil)
	var repos []map[string]any
	r.JSON(&repos)
	if r.Status != 200 || len(repos) != 2 || repos[0]["full_name"] != "acme-gh/api" || repos[0]["owner"] != "acme-gh" {
		t.Fatalf("repositories: %d %s", r.Status, r.Body)
	}
	// A repository the installation does not reach refuses the selection.
	r = e.Admin("PUT", "/api/mcp/connections/"+id+"/github/selected", map[string]any{"repositories": []map[string]any{
		{"name": "api", "url": repos[0]["url"]}, {"name": "x", "url": e.gh.URL + "/someone/else"}}})
	if r.Status != 422 || !strings.Contains(string(r.Body), "repositories[1].url") {
		t.Fatalf("unreachable: %d %s", r.Status, r.Body)
	}
	if n := e.Count("guild_repositories"); n != 0 {
		t.Fatalf("refused selection stored %d", n)
	}
	r = e.Admin("PUT", "/api/mcp/connections/"+id+"/github/selected", map[string]any{"repositories": []map[string]any{
		{"name": "api", "url": repos[0]["url"], "default_branch": "main"}}})
	if r.Status != 200 {
		t.Fatalf("select: %d %s", r.Status, r.Body)
	}
	var gr struct {
		Repositories []githubapp.GuildRepository `json:"repositories"`
		GitHubLogins []map[string]any            `json:"github_logins"`
	}
	r = e.Admin("GET", "/api/guilds/"+guild+"/repositories", nil)
	r.JSON(&gr)
	if r.Status != 200 || len(gr.Repositories) != 1 || gr.Repositories[0].GitHubID != api1 || gr.Repositories[0].ConnectionID != id ||
		len(gr.GitHubLogins) != 1 {
		t.Fatalf("guild repositories: %d %s", r.Status, r.Body)
	}
	// The Tools view's GitHub row carries the selection, at the guild and,
	// inherited, at its agents.
	for _, path := range []string{"/api/guilds/" + guild + "/tools", "/api/agents/" + agent + "/tools"} {
		var tv struct {
			Servers []struct {
				Slug  string               `json:"slug"`
				Repos []githubapp.Selected `json:"github_repositories"`
			} `json:"servers"`
		}
		e.Admin("GET", path, nil).JSON(&tv)
		found := false
		for _, sv := range tv.Servers {
			if sv.Slug == "github" {
				found = len(sv.Repos) == 1 && sv.Repos[0].GitHubID == api1
			}
		}
		if !found {
			t.Fatalf("%s: no github_repositories in the GitHub row: %+v", path, tv.Servers)
		}
	}

	// A second guild: the organisation has a connected login, so Connect
	// goes to user authorization; the only installation the user reaches is kept.
	g2 := e.Admin("POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Second"})
	if g2.Status != 201 {
		t.Fatalf("second guild: %d %s", g2.Status, g2.Body)
	}
	guild2 := g2.Map()["id"].(string)
	e.gh.BrowserUser = "octo"
	id2, u2 := e.connect(t, e.browser, "guild", guild2)
	if u2.Path != "/login/oauth/authorize" || u2.Query().Get("client_id") != e.gh.ClientID {
		t.Fatalf("second connect URL %s", u2)
	}
	r = e.callback(t, follow(t, u2.String()))
	if r.Status != 200 || e.status(t, id2) != "connected" {
		t.Fatalf("second guild: %d %s", r.Status, r.Body)
	}
	if n := e.Count("github_logins"); n != 2 {
		t.Fatalf("github_logins %d", n)
	}

	// Removal: the installation is gone, the login is disconnected.
	e.gh.Remove(inst)
	if r := e.Admin("GET", "/api/mcp/connections/"+id+"/github/repositories", nil); r.Status != 409 || e.status(t, id) != "disconnected" {
		t.Fatalf("removed: %d %s, %s", r.Status, r.Body, e.status(t, id))
	}
	// Deleting the login deletes the guild repositories added through it.
	if r := e.Admin("DELETE", "/api/mcp/connections/"+id, nil); r.Status/100 != 2 {
		t.Fatalf("delete: %d %s", r.Status, r.Body)
	}
	if n := e.Count("guild_repositories"); n != 0 {
		t.Fatalf("guild repositories left: %d", n)
	}
}

// A setup redirect (installation_id and state, no code) starts user
// authorization with the same state; GitHub then omits the state, and the
// cookie finds the login.
func TestGitHubSetupRedirectThenAuthorizeWithoutState(t *testing.T) {
	e := newGitHubEnv(t, true)
	org, _, _ := e.Hierarchy()
	inst := e.gh.AddInstallation("acme-gh")
	other := e.gh.AddInstallation("beta-gh")
	e.gh.AddUser("octo", inst, other)
	id, u := e.connect(t, e.browser, "organisation", org)
	state := u.Query().Get("state")
	q := url.Values{"installation_id": {strconv.FormatInt(inst, 10)}, "setup_action": {"install"}, "state": {state}}
	r := e.callback(t, callbackPath(q))
	if r.Status != http.StatusFound {
		t.Fatalf("setup redirect: %d %s", r.Status, r.Body)
	}
	var loc struct {
		AuthorizationURL string `json:"authorization_url"`
	}
	r.JSON(&loc)
	au, _ := url.Parse(loc.AuthorizationURL)
	if au.Path != "/login/oauth/authorize" || au.Query().Get("state") != state {
		t.Fatalf("authorize %s", au)
	}
	// GitHub comes back with the code only: the state is the cookie's, and
	// the setup redirect's installation (one of two the user reaches) is kept.
	cb := url.Values{"code": {e.gh.Code("octo")}}
	r = e.callback(t, callbackPath(cb))
	if r.Status != 200 || r.Map()["account_hint"] != "acme-gh" || e.status(t, id) != "connected" {
		t.Fatalf("callback: %d %s", r.Status, r.Body)
	}
}

func TestGitHubSeveralInstallationsPicker(t *testing.T) {
	e := newGitHubEnv(t, true)
	org, _, _ := e.Hierarchy()
	e.gh.AddUser("octo", e.gh.AddInstallation("acme-gh"), e.gh.AddInstallation("beta-gh"))
	id, u := e.connect(t, e.browser, "organisation", org)
	r := e.callback(t, callbackPath(url.Values{"code": {e.gh.Code("octo")}, "state": {u.Query().Get("state")}}))
	if r.Status != 200 || r.Map()["status"] != "choose" || r.Map()["picker_url"] != api.GitHubPickerPath {
		t.Fatalf("callback: %d %s", r.Status, r.Body)
	}
	r = e.doIn(t, e.browser, "", "GET", api.GitHubPickerPath, "")
	if r.Status != 200 || strings.Contains(string(r.Body), "installation_id") || !strings.Contains(string(r.Body), "beta-gh") {
		t.Fatalf("picker: %d %s", r.Status, r.Body)
	}
	if r := e.doIn(t, newBrowser(), "", "POST", api.GitHubPickerPath, `{"account":"beta-gh","state":"`+u.Query().Get("state")+`"}`); r.Status != 403 {
		t.Fatalf("other browser's choice: %d %s", r.Status, r.Body)
	}
	r = e.doIn(t, e.browser, "", "POST", api.GitHubPickerPath, `{"account":"beta-gh"}`)
	if r.Status != 200 || r.Map()["account_hint"] != "beta-gh" || e.status(t, id) != "connected" {
		t.Fatalf("choose: %d %s", r.Status, r.Body)
	}
}

// setup_action=request waits for an organisation admin: the login stays
// pending; after approval a new Connect and GitHub's update redirect complete it.
func TestGitHubRequestThenApprove(t *testing.T) {
	e := newGitHubEnv(t, true)
	org, _, _ := e.Hierarchy()
	id, u := e.connect(t, e.browser, "organisation", org)
	r := e.callback(t, callbackPath(url.Values{"setup_action": {"request"}, "state": {u.Query().Get("state")}}))
	if r.Status != 202 || e.status(t, id) != "pending" {
		t.Fatalf("request: %d %s %s", r.Status, r.Body, e.status(t, id))
	}
	inst := e.gh.AddInstallation("big-org") // the admin approved
	e.gh.AddUser("octo", inst)
	id2, u2 := e.connect(t, e.browser, "organisation", org)
	if id2 != id {
		t.Fatalf("a second login %s was made", id2)
	}
	q := url.Values{"code": {e.gh.Code("octo")}, "installation_id": {strconv.FormatInt(inst, 10)}, "setup_action": {"update"},
		"state": {u2.Query().Get("state")}}
	if r := e.callback(t, callbackPath(q)); r.Status != 200 || e.status(t, id) != "connected" {
		t.Fatalf("update: %d %s", r.Status, r.Body)
	}
}

func TestGitHubForgedInstallationAndUnknownState(t *testing.T) {
	e := newGitHubEnv(t, true)
	org, _, _ := e.Hierarchy()
	mine := e.gh.AddInstallation("acme-gh")
	victim := e.gh.AddInstallation("victim")
	e.gh.AddUser("octo", mine)
	r := e.callback(t, callbackPath(url.Values{"code": {"x"}, "installation_id": {"1"}, "state": {"never-issued"}}))
	if r.Status != 400 || r.ErrorCode() != "invalid_state" {
		t.Fatalf("unknown state: %d %s", r.Status, r.Body)
	}
	id, u := e.connect(t, e.browser, "organisation", org)
	// Another login's refusal without a state does not end this one.
	if r := e.callback(t, callbackPath(url.Values{"error": {"access_denied"}})); r.Status != 400 || e.status(t, id) != "pending" {
		t.Fatalf("a stateless refusal: %d %s, %s", r.Status, r.Body, e.status(t, id))
	}
	q := url.Values{"code": {e.gh.Code("octo")}, "installation_id": {strconv.FormatInt(victim, 10)}, "state": {u.Query().Get("state")}}
	r = e.callback(t, callbackPath(q))
	if r.Status != 422 || r.ErrorCode() != "github_refused" {
		t.Fatalf("forged id: %d %s", r.Status, r.Body)
	}
	if e.status(t, id) != "absent" || e.Count("github_logins") != 0 || e.Count("bindings") != 0 {
		t.Fatalf("forged id stored something: %s", e.status(t, id))
	}
}
