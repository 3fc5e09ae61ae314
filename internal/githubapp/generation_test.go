package githubapp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/githubapp/githubtest"
	"github.com/guilds/guilds/internal/githubapp/gittokens"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/local"
)

// genEnv is a guild with a connected github login whose selection is
// mirrored, an agent of it, a local GitHub, and the agent's workspace on
// the local driver.
type genEnv struct {
	db      *pgxpool.Pool
	gh      *githubtest.Server
	g       *githubapp.Generations
	agent   githubapp.Agent
	conn    string
	inst    int64
	repo    int64
	ws      *workspaces.Manager
	driver  *local.Driver
	keyring *secret.Keyring
}

func testKeyring(t testing.TB) *secret.Keyring {
	t.Helper()
	entry, err := secret.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	kr, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func buildCredentialHelper(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "guilds-git-credential")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/guilds/guilds/cmd/guilds-git-credential").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return bin
}

func newGenEnv(t testing.TB, opts ...githubtest.Option) *genEnv {
	t.Helper()
	ctx := context.Background()
	e := &genEnv{db: testdb.New(t), gh: githubtest.New(t, opts...)}
	ms, err := catalog.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	if err := catalog.Seed(ctx, e.db, ms); err != nil {
		t.Fatal(err)
	}
	if err := e.db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id),
g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'Guild' FROM o RETURNING id, organisation_id)
INSERT INTO agents (guild_id, name) SELECT id, 'Coder' FROM g RETURNING id::text, guild_id::text,
    (SELECT organisation_id::text FROM g)`).Scan(&e.agent.ID, &e.agent.GuildID, &e.agent.OrgID); err != nil {
		t.Fatal(err)
	}
	e.inst = e.gh.AddInstallation("acme-gh")
	e.repo = e.gh.AddRepo(t, e.inst, "acme-gh", "api")
	e.conn = connectionstest.InsertOf(t, e.db, "github", "guild", e.agent.GuildID)
	connectionstest.SetConnected(t, e.db, e.conn, "acme-gh")
	sel := []githubapp.Selected{{GitHubID: e.repo, Name: "api", FullName: "acme-gh/api", URL: e.gh.URL + "/acme-gh/api", DefaultBranch: "main"}}
	for _, err := range []error{githubapp.SaveLogin(ctx, e.db, e.conn, e.inst, "acme-gh"), githubapp.SetSelected(ctx, e.db, e.conn, sel),
		githubapp.SaveAccess(ctx, e.db, e.conn, []githubapp.RepoAccess{{GitHubID: e.repo, FullName: "acme-gh/api", Permission: githubapp.PermWrite}}, time.Now()),
		githubapp.MirrorSelection(ctx, e.db, e.agent.GuildID, e.conn, sel)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	e.driver, err = local.New(local.Options{AllowUnisolated: true, Root: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	e.ws = workspaces.New(e.driver, workspaces.Options{})
	t.Cleanup(func() { _ = e.ws.Close(context.Background()) })
	cfg := e.gh.Config()
	e.keyring = testKeyring(t)
	e.g = &githubapp.Generations{DB: e.db, Workspace: e.ws, Helper: buildCredentialHelper(t), Keyring: e.keyring,
		App: func() (*githubapp.Client, error) { return &githubapp.Client{Config: cfg}, nil }}
	return e
}

func (e *genEnv) host(t *testing.T, p string) string {
	t.Helper()
	h, err := e.driver.HostPath(e.ws.SandboxID(e.agent.ID), p)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func (e *genEnv) exec(t *testing.T, dir string, env map[string]string, cmd ...string) sandbox.ExecResult {
	t.Helper()
	res, err := e.ws.Exec(context.Background(), e.agent.ID, sandbox.ExecRequest{Cmd: cmd, Dir: dir, Env: env})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestGenerationClonesWithATokenLimitedToTheSelection(t *testing.T) {
	e := newGenEnv(t)
	ctx := context.Background()
	other := e.gh.AddRepo(t, e.inst, "acme-gh", "unselected")
	p, err := e.g.Prepare(ctx, e.agent)
	if err != nil {
		t.Fatal(err)
	}
	if p.Repositories != 1 || p.ExpiresAt.IsZero() {
		t.Fatalf("prepared %+v", p)
	}
	last := e.gh.TokenRequests[len(e.gh.TokenRequests)-1].Request
	if len(last.RepositoryIDs) != 1 || last.RepositoryIDs[0] != e.repo || last.Permissions["contents"] != "write" || last.Permissions["pull_requests"] != "write" {
		t.Fatalf("token request %+v", last)
	}
	readme, err := os.ReadFile(filepath.Join(e.host(t, "/home/agent/repos/api"), "README.md"))
	if err != nil || !strings.Contains(string(readme), "api") {
		t.Fatalf("clone: %q %v", readme, err)
	}
	secrets, _ := e.g.RunSecrets(ctx, e.agent.ID)
	if len(secrets) != 1 {
		t.Fatalf("redaction set %v", secrets)
	}
	tok := secrets[0]
	// Another worker, which issued nothing, redacts it too: a later tool
	// call of the run may run there.
	elsewhere := &githubapp.Generations{DB: e.db, Keyring: e.keyring}
	if s, err := elsewhere.RunSecrets(ctx, e.agent.ID); err != nil || len(s) != 1 || s[0] != tok {
		t.Fatalf("another worker's redaction set: %d tokens, %v", len(s), err)
	}
	var stored string
	if err := e.db.QueryRow(ctx, `SELECT encode(ciphertext, 'escape') FROM github_issued_tokens`).Scan(&stored); err != nil || strings.Contains(stored, tok) {
		t.Fatalf("the token is stored in clear (%v)", err)
	}
	cfg, _ := os.ReadFile(filepath.Join(e.host(t, "/home/agent/repos/api"), ".git", "config"))
	if strings.Contains(string(cfg), tok) {
		t.Fatal(".git/config holds the token")
	}
	raw, err := os.ReadFile(e.host(t, gittokens.Path))
	var f gittokens.File
	if err != nil || json.Unmarshal(raw, &f) != nil || len(f.Tokens) != 1 || f.Tokens[0].Dir != "/home/agent/repos/api" {
		t.Fatalf("tokens file %s %v", raw, err)
	}
	// The agent commits and pushes in its sandbox through the helper.
	env := map[string]string{"GIT_TERMINAL_PROMPT": "0", "GIT_AUTHOR_NAME": "agent", "GIT_AUTHOR_EMAIL": "agent@example.com",
		"GIT_COMMITTER_NAME": "agent", "GIT_COMMITTER_EMAIL": "agent@example.com"}
	for _, kv := range f.GitConfigEnv() {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
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
	// The token reaches only the selection.
	if res := e.exec(t, "/home/agent", env, "git", "clone", "-q", e.gh.RepoURL(other), "repos/unselected"); res.ExitCode == 0 {
		t.Fatal("cloned an unselected repository")
	}
	// A second generation updates the clone instead of cloning again.
	if _, err := e.g.Prepare(ctx, e.agent); err != nil {
		t.Fatal(err)
	}
}

func TestGenerationFollowsARename(t *testing.T) {
	e := newGenEnv(t)
	ctx := context.Background()
	e.gh.Rename(e.repo, "acme-labs", "service")
	if _, err := e.g.Prepare(ctx, e.agent); err != nil {
		t.Fatal(err)
	}
	l, err := githubapp.GetLogin(ctx, e.db, e.conn)
	if err != nil || l.Selected[0].URL != e.gh.URL+"/acme-labs/service" || l.Selected[0].Name != "service" {
		t.Fatalf("selection %+v %v", l.Selected, err)
	}
	repos, err := githubapp.GuildRepositories(ctx, e.db, e.agent.GuildID)
	if err != nil || len(repos) != 1 || repos[0].URL != e.gh.URL+"/acme-labs/service" {
		t.Fatalf("guild repositories %+v %v", repos, err)
	}
	if _, err := os.Stat(filepath.Join(e.host(t, "/home/agent/repos/service"), "README.md")); err != nil {
		t.Fatal(err)
	}
}

func TestGenerationFailsAtStartWhenTheInstallationIsGone(t *testing.T) {
	for _, how := range []string{"removed", "suspended"} {
		t.Run(how, func(t *testing.T) {
			e := newGenEnv(t)
			if how == "removed" {
				e.gh.Remove(e.inst)
			} else {
				e.gh.Suspend(e.inst)
			}
			_, err := e.g.Prepare(context.Background(), e.agent)
			var re *githubapp.RefusedError
			if !errors.As(err, &re) || !strings.Contains(re.Message, "acme-gh") || !strings.Contains(re.Message, "disconnected") {
				t.Fatalf("err = %v", err)
			}
			if st := connectionstest.Status(t, e.db, e.conn); st != "disconnected" {
				t.Fatalf("status %s", st)
			}
			// The next generation fails at once, without asking GitHub, and
			// does not fall back to a wider login.
			n := len(e.gh.TokenRequests)
			_, err = e.g.Prepare(context.Background(), e.agent)
			if !errors.As(err, &re) || !strings.Contains(re.Message, "disconnected") || len(e.gh.TokenRequests) != n {
				t.Fatalf("after the removal: %v", err)
			}
		})
	}
}

func TestGenerationNamesTheRepositoryTheInstallationNoLongerReaches(t *testing.T) {
	e := newGenEnv(t)
	ctx := context.Background()
	elsewhere := e.gh.AddInstallation("elsewhere")
	moved := e.gh.AddRepo(t, elsewhere, "elsewhere", "moved")
	sel := []githubapp.Selected{{GitHubID: e.repo, Name: "api", URL: e.gh.URL + "/acme-gh/api"},
		{GitHubID: moved, Name: "moved", FullName: "acme-gh/moved", URL: e.gh.URL + "/acme-gh/moved"}}
	if err := githubapp.SetSelected(ctx, e.db, e.conn, sel); err != nil {
		t.Fatal(err)
	}
	// The user reached both when the login connected.
	if err := githubapp.SaveAccess(ctx, e.db, e.conn, []githubapp.RepoAccess{{GitHubID: e.repo, FullName: "acme-gh/api", Permission: githubapp.PermWrite},
		{GitHubID: moved, FullName: "acme-gh/moved", Permission: githubapp.PermWrite}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	_, err := e.g.Prepare(ctx, e.agent)
	var re *githubapp.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "acme-gh/moved") {
		t.Fatalf("err = %v", err)
	}
}

// A token within ten minutes of its expiry is replaced before a shell call;
// a fresh one is left alone.
func TestRefreshReplacesATokenCloseToItsExpiry(t *testing.T) {
	e := newGenEnv(t)
	ctx := context.Background()
	e.gh.TokenLife = 5 * time.Minute
	if _, err := e.g.Prepare(ctx, e.agent); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(e.host(t, gittokens.Path))
	if !e.g.Due(e.agent.ID) {
		t.Fatal("a token of five minutes is not due")
	}
	e.gh.TokenLife = time.Hour
	if err := e.g.Refresh(ctx, e.agent); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(e.host(t, gittokens.Path))
	if string(first) == string(second) || e.g.Due(e.agent.ID) {
		t.Fatal("the token was not replaced")
	}
	n := len(e.gh.TokenRequests)
	if err := e.g.Refresh(ctx, e.agent); err != nil || len(e.gh.TokenRequests) != n {
		t.Fatalf("a fresh token was replaced (%v)", err)
	}
	// Both tokens stay in the redaction set.
	if s, _ := e.g.RunSecrets(ctx, e.agent.ID); len(s) != 2 {
		t.Fatalf("redaction set %d", len(s))
	}
}

// A repository the login's user could only read gets a read token: reaching
// the installation is not write access to its repositories.
func TestGenerationAsksForWriteOnlyWhereTheUserCanPush(t *testing.T) {
	e := newGenEnv(t)
	ctx := context.Background()
	if err := githubapp.SaveAccess(ctx, e.db, e.conn, []githubapp.RepoAccess{{GitHubID: e.repo, FullName: "acme-gh/api", Permission: githubapp.PermRead}},
		time.Now()); err != nil {
		t.Fatal(err)
	}
	before := len(e.gh.TokenRequests)
	if _, err := e.g.Prepare(ctx, e.agent); err != nil {
		t.Fatal(err)
	}
	calls := e.gh.TokenRequests[before:]
	if len(calls) != 1 || calls[0].Request.Permissions["contents"] != "read" || calls[0].Request.Permissions["pull_requests"] != "read" {
		t.Fatalf("token requests %+v", calls)
	}
}

// A record of the user's reach that expired (the user's token is not kept
// to read it again) refuses the generation before any token is asked for.
func TestGenerationRefusesAnExpiredRecordOfTheUsersReach(t *testing.T) {
	e := newGenEnv(t)
	ctx := context.Background()
	if err := githubapp.SaveAccess(ctx, e.db, e.conn, []githubapp.RepoAccess{{GitHubID: e.repo, FullName: "acme-gh/api", Permission: githubapp.PermWrite}},
		time.Now().Add(-githubapp.AccessTTL-time.Minute)); err != nil {
		t.Fatal(err)
	}
	before := len(e.gh.TokenRequests)
	_, err := e.g.Prepare(ctx, e.agent)
	var re *githubapp.RefusedError
	if !errors.As(err, &re) || !strings.Contains(re.Message, "connect GitHub again") || len(e.gh.TokenRequests) != before {
		t.Fatalf("err = %v, %d token requests", err, len(e.gh.TokenRequests)-before)
	}
}
