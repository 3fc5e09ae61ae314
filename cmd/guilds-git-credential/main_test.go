package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/githubapp/githubtest"
	"github.com/guilds/guilds/internal/githubapp/gittokens"
)

func TestGetAnswersTheTokenOfTheRepositoryGitTalksTo(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "git-tokens.json")
	f := gittokens.File{Hosts: []string{"https://github.com"}, Tokens: []gittokens.Token{
		{Origin: "https://github.com", Path: "acme/api", Token: "ghs_api", ExpiresAt: time.Now().Add(time.Hour)},
		{Origin: "https://github.com", Path: "acme/web", Token: "ghs_web", ExpiresAt: time.Now().Add(time.Hour)}}}
	b, _ := json.Marshal(f)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := get(strings.NewReader("protocol=https\nhost=github.com\npath=acme/Web.git\n\n"), &out, path, time.Now()); err != nil {
		t.Fatal(err)
	}
	if out.String() != "username=x-access-token\npassword=ghs_web\n" {
		t.Fatalf("answer %q", out.String())
	}
	out.Reset()
	if err := get(strings.NewReader("protocol=https\nhost=github.com\npath=other/x.git\n"), &out, path, time.Now()); err != nil || out.Len() != 0 {
		t.Fatalf("unknown repository: %q %v", out.String(), err)
	}
	if err := get(strings.NewReader("protocol=https\nhost=github.com\npath=acme/api\n"), &out, path, time.Now().Add(2*time.Hour)); err == nil || out.Len() != 0 {
		t.Fatalf("expired token answered: %q", out.String())
	}
}

// Real git against a local GitHub: clone, commit and push through the
// helper set by GIT_CONFIG_COUNT; a helper the agent configured in its home
// never runs, and the token is in no file of the clone.
func TestGitClonesAndPushesThroughTheHelper(t *testing.T) {
	gh := githubtest.New(t)
	inst := gh.AddInstallation("acme")
	repo := gh.AddRepo(t, inst, "acme", "api")
	other := gh.AddRepo(t, inst, "acme", "web")
	c := &githubapp.Client{Config: gh.Config()}
	tok, err := c.AccessToken(context.Background(), inst, githubapp.TokenRequest{RepositoryIDs: []int64{repo}, Permissions: githubapp.CodingPermissions})
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "guilds-git-credential")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	home := t.TempDir()
	marker := filepath.Join(home, "agent-helper-ran")
	// What gh auth setup-git (or an agent) would leave in its home.
	gitconfig := "[credential]\n\thelper = \"!f() { touch " + marker + "; echo username=x; echo password=stolen; }; f\"\n" +
		"[credential \"" + gh.URL + "\"]\n\thelper = \"!f() { touch " + marker + "; echo password=stolen; }; f\"\n"
	if err := os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(t.TempDir(), "git-tokens.json")
	f := gittokens.File{Helper: bin, Hosts: []string{gh.URL}, Tokens: []gittokens.Token{
		{Origin: gh.URL, Path: "acme/api", Dir: filepath.Join(home, "repos", "api"), Token: tok.Token, ExpiresAt: tok.ExpiresAt}}}
	b, _ := json.Marshal(f)
	if err := os.WriteFile(tokens, b, 0o600); err != nil {
		t.Fatal(err)
	}
	env := append([]string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1",
		gittokens.EnvPath + "=" + tokens, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com",
		"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com"}, f.GitConfigEnv()...)
	git := func(wd string, args ...string) (string, error) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = wd, env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := git(home, "clone", "-q", gh.RepoURL(repo), "repos/api"); err != nil {
		t.Fatalf("clone: %v\n%s", err, out)
	}
	wd := filepath.Join(home, "repos", "api")
	if err := os.WriteFile(filepath.Join(wd, "change.txt"), []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"add", "."}, {"commit", "-q", "-m", "agent change"}, {"push", "-q", "origin", "HEAD:main"}} {
		if out, err := git(wd, args...); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	if out, _ := exec.Command("git", "--git-dir", gh.GitDir(repo), "log", "-1", "--format=%s", "main").Output(); string(out) != "agent change\n" {
		t.Fatalf("pushed %q", out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the agent's credential helper ran")
	}
	// A repository without a token in the file gets nothing.
	if out, err := git(home, "clone", "-q", gh.RepoURL(other), "repos/web"); err == nil {
		t.Fatalf("cloned without a token: %s", out)
	}
	cfg, err := os.ReadFile(filepath.Join(wd, ".git", "config"))
	if err != nil || strings.Contains(string(cfg), tok.Token) {
		t.Fatalf(".git/config holds the token (%v)", err)
	}
}

// The relay mode does nothing without a tokens file or a proxy in it, and
// names what is missing when the file names a proxy but no socket.
func TestRelayModeNeedsAProxyInTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "git-tokens.json")
	if err := ensureRelay(path); err != nil {
		t.Fatalf("no file: %v", err)
	}
	for f, want := range map[*gittokens.File]string{
		{Hosts: []string{"https://github.com"}}: "",
		{Proxy: gittokens.ProxyURL}:             "no proxy socket",
	} {
		b, _ := json.Marshal(f)
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		err := ensureRelay(path)
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%+v: %v, want %q", f, err, want)
		}
	}
}
