package gittokens

import (
	"slices"
	"testing"
)

func TestLookups(t *testing.T) {
	f := File{Hosts: []string{"https://github.com/"}, Tokens: []Token{
		{Origin: "https://github.com", Path: "Acme/API", Dir: "/home/agent/repos/api", Token: "a"},
		{Origin: "https://github.com", Path: "acme/api-docs", Dir: "/home/agent/repos/api/docs", Token: "d"}}}
	for _, tc := range []struct{ protocol, host, path, want string }{
		{"https", "github.com", "acme/api.git", "a"}, {"https", "GitHub.com", "/acme/api", "a"},
		{"http", "github.com", "acme/api", ""}, {"https", "github.com", "acme/other", ""}} {
		if got, _ := f.For(tc.protocol, tc.host, tc.path); got.Token != tc.want {
			t.Errorf("For(%s, %s, %s) = %q, want %q", tc.protocol, tc.host, tc.path, got.Token, tc.want)
		}
	}
	for dir, want := range map[string]string{"/home/agent/repos/api/src": "a", "/home/agent/repos/api/docs/x": "d",
		"/home/agent/repos/apix": "", "/home/agent": ""} {
		if got, _ := f.ForDir(dir); got.Token != want {
			t.Errorf("ForDir(%s) = %q, want %q", dir, got.Token, want)
		}
	}
	env := f.GitConfigEnv()
	want := []string{"GIT_CONFIG_COUNT=3", "GIT_CONFIG_KEY_0=credential.https://github.com.helper", "GIT_CONFIG_VALUE_0=",
		"GIT_CONFIG_KEY_1=credential.https://github.com.helper", "GIT_CONFIG_VALUE_1=" + HelperPath,
		"GIT_CONFIG_KEY_2=credential.https://github.com.useHttpPath", "GIT_CONFIG_VALUE_2=true"}
	if !slices.Equal(env, want) {
		t.Errorf("GitConfigEnv = %q", env)
	}
}

func TestProxyEnv(t *testing.T) {
	f := File{Hosts: []string{"https://github.com"}}
	if env := f.ProxyEnv(); env != nil || len(f.GitConfigEnv()) != 7 {
		t.Errorf("without a proxy: %q %q", env, f.GitConfigEnv())
	}
	f.Proxy = ProxyURL
	want := []string{"HTTPS_PROXY=http://127.0.0.1:3129", "https_proxy=http://127.0.0.1:3129", "HTTP_PROXY=http://127.0.0.1:3129",
		"http_proxy=http://127.0.0.1:3129", "NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1"}
	if env := f.ProxyEnv(); !slices.Equal(env, want) {
		t.Errorf("ProxyEnv = %q", env)
	}
	// Git asks GitHub's https URLs over plain http, so the route can add the token.
	env := f.GitConfigEnv()
	if env[0] != "GIT_CONFIG_COUNT=5" || !slices.Contains(env, "GIT_CONFIG_KEY_3=http.proxy") || !slices.Contains(env, "GIT_CONFIG_VALUE_3="+ProxyURL) ||
		!slices.Contains(env, "GIT_CONFIG_KEY_4=url.http://github.com/.insteadOf") || !slices.Contains(env, "GIT_CONFIG_VALUE_4=https://github.com/") {
		t.Errorf("GitConfigEnv with a proxy = %q", env)
	}
}
