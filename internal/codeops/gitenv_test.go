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
	if strings.Contains(res.Text, "GIT_CONFIG_COUNT") || strings.Contains(res.Text, "GH_TOKEN") || strings.Contains(strings.ToUpper(res.Text), "HTTPS_PROXY") {
		t.Fatalf("environment: %s", res.Text)
	}
}

// A generation whose sandbox reaches GitHub through the worker's proxy
// names it in the file: commands get the proxy variables and git's
// http.proxy, which a granted secret of the same name cannot replace; the
// relay is started through the helper named there.
func TestShellSendsGitHubThroughTheProxyTheFileNames(t *testing.T) {
	env := testEnv(t)
	env.Req.Env = map[string]string{"HTTPS_PROXY": "http://evil.example:1"}
	marker := filepath.Join(t.TempDir(), "relay-started")
	helper := filepath.Join(t.TempDir(), "helper")
	if err := os.WriteFile(helper, []byte("#!/bin/sh\n[ \"$1\" = relay ] && touch "+marker+"\n"), 0o700); err != nil { //nolint:gosec // G306: a test script
		t.Fatal(err)
	}
	f := gittokens.File{Helper: helper, Hosts: []string{"https://github.com"}, Proxy: gittokens.ProxyURL, ProxySocket: "/run/guilds-proxy/git.sock"}
	b, _ := json.Marshal(f)
	if err := os.MkdirAll(env.RunDir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.RunDir, "git-tokens.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	res := call(t, env, Shell, shellArgs("echo p=$HTTPS_PROXY,$https_proxy n=$NO_PROXY; git config --get http.proxy"))
	if !strings.Contains(res.Text, "p=http://127.0.0.1:3129,http://127.0.0.1:3129 n=localhost,127.0.0.1\nhttp://127.0.0.1:3129") {
		t.Fatalf("environment: %s", res.Text)
	}
	if _, err := os.Stat(marker); err != nil && !gittokens.RelayUp() {
		t.Errorf("the relay was not started through the helper: %v", err)
	}
	if res := call(t, env, Shell, shellArgs("env")); strings.Contains(res.Text, "evil.example") {
		t.Fatalf("a secret replaced the proxy: %s", res.Text)
	}
}
