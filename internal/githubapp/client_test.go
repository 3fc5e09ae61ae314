package githubapp_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/githubapp/githubtest"
	"github.com/guilds/guilds/internal/integrations"
)

func client(t *testing.T, gh *githubtest.Server) *githubapp.Client {
	t.Helper()
	cfg, err := githubapp.FromRegistry(integrations.New(gh.Getenv))
	if err != nil {
		t.Fatal(err)
	}
	return &githubapp.Client{Config: cfg}
}

func TestFromRegistryNamesMissingVariables(t *testing.T) {
	env := map[string]string{"GITHUB_APP_ID": "1", "GITHUB_APP_SLUG": "x"}
	_, err := githubapp.FromRegistry(integrations.New(func(k string) string { return env[k] }))
	var ns *githubapp.NotSetUpError
	if !errors.As(err, &ns) || len(ns.Missing) != 3 || !strings.Contains(err.Error(), "GITHUB_APP_PRIVATE_KEY") {
		t.Fatalf("err = %v", err)
	}
	env = map[string]string{"GITHUB_APP_ID": "1", "GITHUB_APP_SLUG": "x", "GITHUB_APP_PRIVATE_KEY": "nope",
		"GITHUB_APP_CLIENT_ID": "c", "GITHUB_APP_CLIENT_SECRET": "s"}
	_, err = githubapp.FromRegistry(integrations.New(func(k string) string { return env[k] }))
	if err == nil || !strings.Contains(err.Error(), "GITHUB_APP_PRIVATE_KEY") || strings.Contains(err.Error(), "nope") {
		t.Fatalf("bad key: %v", err)
	}
}

func TestPrivateKeyWithRealNewlines(t *testing.T) {
	gh := githubtest.New(t)
	if _, err := githubapp.ParsePrivateKey(gh.KeyPEM); err != nil {
		t.Fatal(err)
	}
}

func TestAppJWTIsVerifiedByGitHub(t *testing.T) {
	gh := githubtest.New(t)
	c := client(t, gh)
	inst := gh.AddInstallation("acme")
	got, err := c.Installation(context.Background(), inst)
	if err != nil || got.Account.Login != "acme" || got.ID != inst {
		t.Fatalf("installation = %+v, %v", got, err)
	}
	// A JWT signed by another key is refused.
	other := githubtest.New(t)
	c.Key = other.Key
	if _, err := c.Installation(context.Background(), inst); !statusIs(err, http.StatusUnauthorized) {
		t.Fatalf("foreign key: %v", err)
	}
	// A JWT living too long is refused.
	c = client(t, gh)
	c.Now = func() time.Time { return time.Now().Add(-10 * time.Minute) }
	if _, err := c.Installation(context.Background(), inst); !statusIs(err, http.StatusUnauthorized) {
		t.Fatalf("expired JWT: %v", err)
	}
}

func statusIs(err error, status int) bool {
	var se *githubapp.StatusError
	return errors.As(err, &se) && se.Status == status
}

func TestAccessTokenLimitedToRepositoriesByID(t *testing.T) {
	gh := githubtest.New(t)
	c := client(t, gh)
	ctx := context.Background()
	inst := gh.AddInstallation("acme")
	a := gh.AddRepo(t, inst, "acme", "api")
	b := gh.AddRepo(t, inst, "acme", "web")
	tok, err := c.AccessToken(ctx, inst, githubapp.TokenRequest{RepositoryIDs: []int64{a}, Permissions: githubapp.CodingPermissions})
	if err != nil {
		t.Fatal(err)
	}
	if len(tok.Repositories) != 1 || tok.Repositories[0].FullName != "acme/api" || time.Until(tok.ExpiresAt) < 50*time.Minute {
		t.Fatalf("token = %+v", tok)
	}
	repos, err := c.InstallationRepositories(ctx, tok.Token)
	if err != nil || len(repos) != 1 || repos[0].ID != a {
		t.Fatalf("repositories = %+v, %v", repos, err)
	}
	// A repository of another installation is refused with 422.
	other := gh.AddInstallation("other")
	x := gh.AddRepo(t, other, "other", "x")
	if _, err := c.AccessToken(ctx, inst, githubapp.TokenRequest{RepositoryIDs: []int64{a, x}}); !statusIs(err, http.StatusUnprocessableEntity) {
		t.Fatalf("foreign repository: %v", err)
	}
	// A rename keeps the id and GitHub's answer names the repository as it is now.
	gh.Rename(b, "acme-labs", "website")
	tok, err = c.AccessToken(ctx, inst, githubapp.TokenRequest{RepositoryIDs: []int64{b}})
	if err != nil || tok.Repositories[0].FullName != "acme-labs/website" {
		t.Fatalf("renamed = %+v, %v", tok.Repositories, err)
	}
	gh.Suspend(other)
	if _, err := c.AccessToken(ctx, other, githubapp.TokenRequest{}); !githubapp.Gone(err) || !statusIs(err, http.StatusForbidden) {
		t.Fatalf("suspended: %v", err)
	}
	gh.Remove(inst)
	if _, err := c.AccessToken(ctx, inst, githubapp.TokenRequest{}); !githubapp.Gone(err) || !statusIs(err, http.StatusNotFound) {
		t.Fatalf("removed: %v", err)
	}
}

func TestUserInstallationsAndCodeExchange(t *testing.T) {
	gh := githubtest.New(t)
	c := client(t, gh)
	ctx := context.Background()
	a, b := gh.AddInstallation("acme"), gh.AddInstallation("beta")
	gh.AddInstallation("stranger")
	gh.AddUser("octo", a, b)
	tok, err := c.ExchangeCode(ctx, gh.Code("octo"), "http://127.0.0.1/cb")
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.UserInstallations(ctx, tok)
	if err != nil || len(got) != 2 || got[0].Account.Login != "acme" {
		t.Fatalf("user installations = %+v, %v", got, err)
	}
	if _, err := c.ExchangeCode(ctx, "forged", "http://127.0.0.1/cb"); err == nil {
		t.Fatal("a forged code was exchanged")
	}
}

func TestGitOverSmartHTTPTakesTheInstallationToken(t *testing.T) {
	gh := githubtest.New(t)
	c := client(t, gh)
	ctx := context.Background()
	inst := gh.AddInstallation("acme")
	a := gh.AddRepo(t, inst, "acme", "api")
	b := gh.AddRepo(t, inst, "acme", "web")
	tok, err := c.AccessToken(ctx, inst, githubapp.TokenRequest{RepositoryIDs: []int64{a}, Permissions: githubapp.CodingPermissions})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	git := func(wd string, args ...string) error {
		cmd := exec.Command("git", args...)
		cmd.Dir = wd
		cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir,
			"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return errors.New(string(out))
		}
		return nil
	}
	withToken := func(u, token string) string {
		return strings.Replace(u, "http://", "http://x-access-token:"+token+"@", 1)
	}
	if err := git(dir, "clone", "-q", gh.RepoURL(a), "noauth"); err == nil {
		t.Fatal("cloned without a token")
	}
	if err := git(dir, "clone", "-q", withToken(gh.RepoURL(b), tok.Token), "web"); err == nil {
		t.Fatal("cloned a repository the token does not reach")
	}
	if err := git(dir, "clone", "-q", withToken(gh.RepoURL(a), tok.Token), "api"); err != nil {
		t.Fatal(err)
	}
	wd := filepath.Join(dir, "api")
	if err := os.WriteFile(filepath.Join(wd, "x.txt"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "x.txt"}, {"commit", "-q", "-m", "x"}, {"push", "-q", "origin", "main"}} {
		if err := git(wd, args...); err != nil {
			t.Fatalf("git %v: %v", args, err)
		}
	}
	out, err := exec.Command("git", "--git-dir", gh.GitDir(a), "log", "--format=%s", "main").Output()
	if err != nil || !strings.HasPrefix(string(out), "x\n") {
		t.Fatalf("pushed log = %q, %v", out, err)
	}
}
