package githubtest

import (
	"fmt"
	"net/http"
	"net/http/cgi" //nolint:gosec // G504: Go >= 1.6.3 refuses the Proxy header (httpoxy); a test fake runs git http-backend as GitHub serves git
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// httpBackend is git's smart HTTP server, run as CGI.
const httpBackend = "/usr/lib/git-core/git-http-backend"

// AddRepo makes a repository of an installation, owned by owner, with one
// commit on main holding README.md; it answers GitHub's id for it.
func (s *Server) AddRepo(t testing.TB, installationID int64, owner, name string) int64 {
	t.Helper()
	s.mu.Lock()
	id := s.id()
	s.mu.Unlock()
	dir := filepath.Join(s.gitRoot, strconv.FormatInt(id, 10)+".git")
	run := func(stdin string, args ...string) string {
		cmd := exec.Command("git", append([]string{"--git-dir", dir}, args...)...) //nolint:gosec // G204: the fake's own git plumbing
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=fake", "GIT_AUTHOR_EMAIL=fake@example.com",
			"GIT_COMMITTER_NAME=fake", "GIT_COMMITTER_EMAIL=fake@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+s.gitRoot)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("git", "init", "--quiet", "--bare", dir).CombinedOutput(); err != nil { //nolint:gosec // G204: a folder of the test's own
		t.Fatalf("git init: %v\n%s", err, out)
	}
	run("", "config", "http.receivepack", "true")
	blob := run("# "+name+"\n", "hash-object", "-w", "--stdin")
	tree := run(fmt.Sprintf("100644 blob %s\tREADME.md\n", blob), "mktree")
	commit := run("", "commit-tree", tree, "-m", "initial commit")
	run("", "update-ref", "refs/heads/main", commit)
	run("", "symbolic-ref", "HEAD", "refs/heads/main")
	s.mu.Lock()
	s.repos[id] = &repo{id: id, inst: installationID, owner: owner, name: name, private: true, dir: dir}
	s.mu.Unlock()
	return id
}

// Rename gives a repository a new owner and name (its id stays).
func (s *Server) Rename(repoID int64, owner, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rp := s.repos[repoID]; rp != nil {
		rp.owner, rp.name = owner, name
	}
}

// RepoURL is a repository's current clone URL.
func (s *Server) RepoURL(repoID int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repos[repoID]
	return s.URL + "/" + rp.owner + "/" + rp.name + ".git"
}

// GitDir is a repository's bare directory, for a test to read what was pushed.
func (s *Server) GitDir(repoID int64) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[repoID].dir
}

// git serves /{owner}/{repo}.git/… through git http-backend when the Basic
// password is an installation token that reaches the repository; otherwise
// it asks for credentials (401), as GitHub does.
func (s *Server) git(w http.ResponseWriter, r *http.Request) {
	owner, name := r.PathValue("owner"), strings.TrimSuffix(r.PathValue("repo"), ".git")
	rest := strings.TrimPrefix(r.URL.Path, "/"+r.PathValue("owner")+"/"+r.PathValue("repo"))
	s.mu.Lock()
	var rp *repo
	for _, c := range s.repos {
		if c.owner == owner && c.name == name {
			rp = c
		}
	}
	_, password, _ := r.BasicAuth()
	ok := false
	if rp != nil {
		if t, live := s.installationToken("token " + password); live && t.inst == rp.inst && (t.repos == nil || t.repos[rp.id]) {
			ok = true
		}
	}
	s.mu.Unlock()
	if rp == nil {
		http.NotFound(w, r)
		return
	}
	if !ok {
		w.Header().Set("WWW-Authenticate", `Basic realm="GitHub"`)
		http.Error(w, "Invalid username or token.", http.StatusUnauthorized)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path = "/" + filepath.Base(rp.dir) + rest
	h := &cgi.Handler{Path: httpBackend, Root: "/",
		Env: []string{"GIT_PROJECT_ROOT=" + s.gitRoot, "GIT_HTTP_EXPORT_ALL=1", "REMOTE_USER=x-access-token", "GIT_CONFIG_NOSYSTEM=1"}}
	h.ServeHTTP(w, r2)
}
