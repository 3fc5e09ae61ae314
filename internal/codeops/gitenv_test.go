package codeops

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/githubapp/gittokens"
)

// With the generation's tokens in the run directory, a shell command gets
// the credential helper through GIT_CONFIG_COUNT and, standing in a
// repository's clone, that repository's token as GH_TOKEN (a granted secret
// of the same name cannot replace it).
func TestShellExportsTheWorkingRepositorysTokenAsGHToken(t *testing.T) {
	env := testEnv(t)
	env.Req.Env = map[string]string{"GH_TOKEN": "agent-secret"}
	f := gittokens.File{Helper: "/usr/local/bin/guilds-git-credential", Hosts: []string{"https://github.com"}, Tokens: []gittokens.Token{
		{Origin: "https://github.com", Path: "acme/api", Dir: "/home/agent/repos/api", Token: "ghs_api_token", ExpiresAt: time.Now().Add(time.Hour)},
		{Origin: "https://github.com", Path: "acme/web", Dir: "/home/agent/repos/web", Token: "ghs_web_token", ExpiresAt: time.Now().Add(time.Hour)}}}
	b, _ := json.Marshal(f)
	if err := os.MkdirAll(env.RunDir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.RunDir, "git-tokens.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(env.Home, "repos", "web", "src"), 0o750); err != nil {
		t.Fatal(err)
	}
	res := call(t, env, Shell, shellArgs("echo token=$GH_TOKEN; git config --get-all credential.https://github.com.helper | tr '\\n' ','"))
	if !strings.Contains(res.Text, "token=agent-secret\n") {
		t.Fatalf("outside a repository: %s", res.Text)
	}
	if !strings.Contains(res.Text, ",/usr/local/bin/guilds-git-credential,") {
		t.Fatalf("helper not configured: %s", res.Text)
	}
	call(t, env, Shell, shellArgs("cd repos/web/src"))
	res = call(t, env, Shell, shellArgs("echo token=$GH_TOKEN"))
	if !strings.Contains(res.Text, "token=ghs_web_token") {
		t.Fatalf("in repos/web/src: %s", res.Text)
	}
}

func TestShellWithoutTokensHasNoGitHubEnvironment(t *testing.T) {
	env := testEnv(t)
	res := call(t, env, Shell, shellArgs("env"))
	if strings.Contains(res.Text, "GIT_CONFIG_COUNT") || strings.Contains(res.Text, "GH_TOKEN") {
		t.Fatalf("environment: %s", res.Text)
	}
}
