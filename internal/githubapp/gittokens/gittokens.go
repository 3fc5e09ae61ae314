// Package gittokens is the file a coding generation's GitHub tokens reach
// the sandbox in (/run/guilds/git-tokens.json, written through the sandbox
// file API) and how the sandbox side reads it: the credential helper
// (cmd/guilds-git-credential) answers git with the token of the repository
// it talks to, and shell exports the token of the working directory's
// repository as GH_TOKEN. It has no dependencies, so the helpers stay small.
package gittokens

import (
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Path is where the file lives in the sandbox.
const Path = "/run/guilds/git-tokens.json"

// EnvPath names the variable that points a helper at the file when it is
// somewhere else (the local development driver's sandboxes).
const EnvPath = "GUILDS_GIT_TOKENS"

// HelperPath is the credential helper in the sandbox image.
const HelperPath = "/usr/local/bin/guilds-git-credential"

// Username is what git sends with an installation token.
const Username = "x-access-token"

// File is the whole file.
type File struct {
	// Helper is the credential helper's path in the sandbox.
	Helper string `json:"helper"`
	// Hosts are the origins the helper answers for ("https://github.com").
	Hosts  []string `json:"hosts"`
	Tokens []Token  `json:"tokens"`
	// Proxy is the relay git reaches GitHub through (ProxyURL) when the
	// sandbox has no network; "" = none (the sandbox has the host's). With a
	// proxy the file holds no token: the worker's proxy adds it.
	Proxy string `json:"proxy,omitempty"`
	// ProxySocket is the worker's proxy socket the relay joins, as the
	// sandbox sees it (/run/guilds-proxy/git.sock).
	ProxySocket string `json:"proxy_socket,omitempty"`
}

// RelayAddr is where the relay to GitHub listens in the sandbox (the
// browsers' relay has 127.0.0.1:3128), and ProxyURL the proxy setting that
// names it.
const (
	RelayAddr = "127.0.0.1:3129"
	ProxyURL  = "http://" + RelayAddr
)

// RelayArg is the credential helper's argument that makes sure the relay
// runs (started detached when it does not answer) and returns.
const RelayArg = "relay"

// RelayUp reports whether something answers on RelayAddr.
func RelayUp() bool {
	c, err := net.DialTimeout("tcp", RelayAddr, 300*time.Millisecond)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// ProxyEnv is the proxy part of a command's environment: http and https
// go to the relay (the worker's GitHub route serves plain http requests to
// GitHub and refuses the rest); the sandbox's own loopback stays direct.
func (f File) ProxyEnv() []string {
	if f.Proxy == "" {
		return nil
	}
	return []string{"HTTPS_PROXY=" + f.Proxy, "https_proxy=" + f.Proxy, "HTTP_PROXY=" + f.Proxy, "http_proxy=" + f.Proxy,
		"NO_PROXY=localhost,127.0.0.1", "no_proxy=localhost,127.0.0.1"}
}

// Token is one repository's token.
type Token struct {
	Origin    string    `json:"origin"` // scheme://host[:port]
	Path      string    `json:"path"`   // owner/name
	Dir       string    `json:"dir"`    // its clone, /home/agent/repos/<name>
	Token     string    `json:"token"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Read loads the file at path ("" is the default: EnvPath, else
// GUILDS_SANDBOX_ROOT + Path, else Path).
func Read(path string) (File, error) {
	if path == "" {
		path = Locate()
	}
	b, err := os.ReadFile(path) //nolint:gosec // G304: the platform's own file in the sandbox
	if err != nil {
		return File{}, err
	}
	var f File
	return f, json.Unmarshal(b, &f)
}

// Locate is the file's path on the filesystem the caller sees.
func Locate() string {
	if p := os.Getenv(EnvPath); p != "" {
		return p
	}
	if root := os.Getenv("GUILDS_SANDBOX_ROOT"); root != "" {
		return filepath.Join(root, Path)
	}
	return Path
}

// NormalPath is a repository path as the file keys it: no leading slash, no
// .git, lower case (GitHub's names are case-insensitive).
func NormalPath(p string) string {
	p = strings.Trim(strings.TrimSpace(p), "/")
	return strings.ToLower(strings.TrimSuffix(p, ".git"))
}

// For finds the token of the repository git talks to (credential protocol
// fields protocol, host and, with useHttpPath, path).
func (f File) For(protocol, host, path string) (Token, bool) {
	origin := strings.ToLower(protocol + "://" + host)
	want := NormalPath(path)
	for _, t := range f.Tokens {
		if strings.ToLower(t.Origin) == origin && NormalPath(t.Path) == want {
			return t, true
		}
	}
	return Token{}, false
}

// ForDir finds the token of the repository whose clone holds dir (a
// sandbox path); the deepest clone wins.
func (f File) ForDir(dir string) (Token, bool) {
	dir = filepath.Clean(dir)
	var best Token
	for _, t := range f.Tokens {
		if t.Dir == "" {
			continue
		}
		d := filepath.Clean(t.Dir)
		if (dir == d || strings.HasPrefix(dir, d+"/")) && len(d) > len(best.Dir) {
			best = t
		}
	}
	return best, best.Token != ""
}

// GitConfigEnv is the credential configuration git reads after every
// configuration file (GIT_CONFIG_COUNT): for each host an empty helper,
// which drops every helper configured before it (one the agent set up in its
// home included), then this helper, with useHttpPath so that git names the
// repository; and http.proxy when the file names a Proxy.
func (f File) GitConfigEnv() []string {
	helper := f.Helper
	if helper == "" {
		helper = HelperPath
	}
	var kv [][2]string
	for _, h := range f.Hosts {
		h = strings.TrimRight(h, "/")
		kv = append(kv, [2]string{"credential." + h + ".helper", ""}, [2]string{"credential." + h + ".helper", helper},
			[2]string{"credential." + h + ".useHttpPath", "true"})
	}
	if f.Proxy != "" {
		// For git every URL goes through the relay, http ones too (a local
		// GitHub in tests); the worker's proxy refuses what is not GitHub.
		kv = append(kv, [2]string{"http.proxy", f.Proxy})
		// The proxy adds the credential, so it must read the request: git
		// asks for GitHub's https URLs over plain http to the relay.
		for _, h := range f.Hosts {
			if rest, ok := strings.CutPrefix(strings.TrimRight(h, "/"), "https://"); ok {
				kv = append(kv, [2]string{"url.http://" + rest + "/.insteadOf", "https://" + rest + "/"})
			}
		}
	}
	out := []string{"GIT_CONFIG_COUNT=" + strconv.Itoa(len(kv))}
	for i, p := range kv {
		n := strconv.Itoa(i)
		out = append(out, "GIT_CONFIG_KEY_"+n+"="+p[0], "GIT_CONFIG_VALUE_"+n+"="+p[1])
	}
	return out
}
