package workspaces

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	osexec "os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/browserproxy"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/githubapp/githubtest"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/native/code"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/docker"
	"github.com/guilds/guilds/sandbox/dockertest"
	"github.com/guilds/guilds/sandbox/sandboxtest"
)

// The ready benchmarks time what issue 35 item 2 calls "ready": from a
// coding generation's start (githubapp.Generations.Prepare) to the agent's
// first code graph answer (code_map through the code tools and guilds-code)
// on a real repository of 50k lines or more, the way production does it:
// the docker driver with the command channel and the agent image, a GitHub
// that speaks git over smart HTTP (githubtest, on a loopback address the
// sandbox cannot reach), and the worker's GitHub proxy (browserproxy with
// the Generations route) reached through the relay the generation starts.
// ns/op is the mean ready time; the -ms metrics are medians. See
// docs/bench/sandbox.md.
//
//	DOCKER_HOST=unix:///tmp/podman.sock go test -p 1 -run '^$' -bench BenchmarkReady -benchtime 3x -count 3 ./internal/workspaces/

// readyModule is the corpus: a module of the module cache made into the
// guild's repository (GUILDS_READY_MODULE overrides it).
const readyModule = "github.com/jackc/pgx/v5@v5.12.0"

// BenchmarkReadyCold: a new agent, no home volume, no sandbox.
func BenchmarkReadyCold(b *testing.B) {
	benchReady(b, func(w *readyWorld) error { return w.m.RemoveHome(context.Background(), w.agent.ID) })
}

// BenchmarkReadyWarm: the agent's sandbox was parked by its idle stop and
// has never had this repository (a repository added to a working agent).
func BenchmarkReadyWarm(b *testing.B) {
	benchReady(b, func(w *readyWorld) error {
		if err := w.shell("rm -rf repos/" + w.repo + " .cache/graft/" + w.repo); err != nil {
			return err
		}
		return w.m.park(w.agent.ID)
	})
}

// BenchmarkReadyAgain: the agent's next generation, its sandbox parked:
// the clone is updated (git pull, reported as clone-ms) and the stored
// graph refreshed.
func BenchmarkReadyAgain(b *testing.B) {
	benchReady(b, func(w *readyWorld) error { return w.m.park(w.agent.ID) })
}

func benchReady(b *testing.B, before func(*readyWorld) error) {
	w := newReadyWorld(b)
	// The first round leaves what Warm and Again start from; Cold removes it.
	w.ready(b)
	b.Logf("%s", w.mapped)
	var start, clone, prepare, graph, ready sandboxtest.Latencies
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		if err := before(w); err != nil {
			b.Fatal(err)
		}
		w.watch.reset()
		b.StartTimer()
		p, g := w.ready(b)
		start, clone, prepare, graph = append(start, w.watch.first), append(clone, w.watch.git), append(prepare, p), append(graph, g)
		ready = append(ready, p+g)
	}
	for name, l := range map[string]sandboxtest.Latencies{"start-ms": start, "clone-ms": clone, "prepare-ms": prepare, "graph-ms": graph, "ready-ms": ready} {
		b.ReportMetric(float64(l.Percentile(50).Microseconds())/1000, name)
	}
	b.ReportMetric(float64(w.lines), "lines")
}

// readyWorld is one coding agent of a guild whose GitHub login selected
// the corpus repository, with its workspace on the docker driver.
type readyWorld struct {
	m      *Manager
	g      *githubapp.Generations
	watch  *stopwatch
	reg    *tools.Registry
	agent  githubapp.Agent
	repo   string // the clone's folder under /home/agent/repos
	lines  int    // lines of Go source in the repository
	seq    int
	mapped string // the first line of the last code_map
}

func newReadyWorld(b *testing.B) *readyWorld {
	b.Helper()
	cli := dockertest.Client(b)
	image := dockertest.AgentImage(b, cli)
	src, name, lines := readyCorpus(b)
	ctx := context.Background()
	w := &readyWorld{repo: name, lines: lines}

	// 127.0.0.2: loopback, but not the sandbox's NO_PROXY 127.0.0.1, and
	// the sandbox has no network: git reaches it only through the proxy.
	gh := githubtest.New(b, githubtest.Listen("127.0.0.2:0", "127.0.0.2"))
	inst := gh.AddInstallation("acme-gh")
	repo := gh.AddRepo(b, inst, "acme-gh", w.repo)
	importTree(b, gh.GitDir(repo), src)

	db := testdb.New(b)
	ms, err := catalog.Manifests()
	if err != nil {
		b.Fatal(err)
	}
	if err := catalog.Seed(ctx, db, ms); err != nil {
		b.Fatal(err)
	}
	a := &w.agent
	if err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id),
g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'Dev' FROM o RETURNING id, organisation_id)
INSERT INTO agents (guild_id, name, config) SELECT id, 'Coder', '{"coding":true}' FROM g
RETURNING id::text, guild_id::text, (SELECT organisation_id::text FROM g)`).Scan(&a.ID, &a.GuildID, &a.OrgID); err != nil {
		b.Fatal(err)
	}
	conn := connectionstest.InsertOf(b, db, "github", "guild", a.GuildID)
	connectionstest.SetConnected(b, db, conn, "acme-gh")
	sel := []githubapp.Selected{{GitHubID: repo, Name: w.repo, FullName: "acme-gh/" + w.repo, URL: gh.URL + "/acme-gh/" + w.repo, DefaultBranch: "main"}}
	for _, err := range []error{githubapp.SaveLogin(ctx, db, conn, inst, "acme-gh"), githubapp.SetSelected(ctx, db, conn, sel),
		githubapp.SaveAccess(ctx, db, conn, []githubapp.RepoAccess{{GitHubID: repo, FullName: sel[0].FullName, Permission: githubapp.PermWrite}}, time.Now()),
		githubapp.MirrorSelection(ctx, db, a.GuildID, conn, sel)} {
		if err != nil {
			b.Fatal(err)
		}
	}

	// The worker's GitHub proxy as cmd/guilds starts it (startGitProxy).
	hosts, private, err := githubapp.EgressHosts(gh.URL, gh.APIURL())
	if err != nil {
		b.Fatal(err)
	}
	proxy, err := browserproxy.New(browserproxy.Options{Dir: b.TempDir(), Socket: "git.sock", Only: hosts,
		Policy: mcpoauth.Policy{AllowLoopback: private, AllowPrivate: private},
		Serve:  func(agentID string, dial browserproxy.DialFunc) http.Handler { return w.g.EgressHandler(agentID, dial) }})
	if err != nil {
		b.Fatal(err)
	}
	// The driver as workspaces.FromConfig builds it: the command channel
	// on, served by the image's own guilds-sandboxd.
	drv, err := docker.New(docker.Options{Client: cli, Scope: "test-" + uuid.NewString(), ChannelDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	w.m = New(drv, Options{Image: image, Binds: proxy.Binds})
	b.Cleanup(func() {
		ctx := context.Background()
		_ = w.m.RemoveHome(ctx, a.ID)
		_ = w.m.Close(ctx)
		_ = proxy.Close()
		_, _ = drv.Cleanup(ctx, 0)
	})
	key, err := secret.GenerateKey("k1")
	if err != nil {
		b.Fatal(err)
	}
	keyring, err := secret.ParseKeyring(key)
	if err != nil {
		b.Fatal(err)
	}
	cfg := gh.Config()
	w.watch = &stopwatch{Workspace: w.m}
	w.g = &githubapp.Generations{DB: db, Workspace: w.watch, Keyring: keyring, Egress: gitProxy{proxy},
		App: func() (*githubapp.Client, error) { return &githubapp.Client{Config: cfg}, nil }}
	w.reg = tools.NewRegistry()
	code.Register(w.reg, code.Deps{Workspace: w.m})
	return w
}

// ready is one generation start and the first code_map after it.
func (w *readyWorld) ready(b *testing.B) (prepare, graph time.Duration) {
	b.Helper()
	ctx := context.Background()
	t0 := time.Now()
	p, err := w.g.Prepare(ctx, w.agent)
	prepare = time.Since(t0)
	if err != nil || p.Repositories != 1 {
		b.Fatalf("generation start: %+v %v", p, err)
	}
	if w.watch.exit != 0 {
		b.Fatalf("git in the sandbox: exit %d: %s", w.watch.exit, w.watch.stderr)
	}
	w.seq++
	args, _ := json.Marshal(map[string]string{"repo": w.repo})
	t0 = time.Now()
	out := w.reg.Invoke(ctx, tools.Call{Name: code.ToolCodeMap, Args: args, RunID: "run-ready", AgentID: w.agent.ID, Seq: w.seq, CallID: "call_map"})
	graph = time.Since(t0)
	if !strings.HasPrefix(out, "repository "+w.repo) {
		b.Fatalf("code_map: %s", out)
	}
	w.mapped, _, _ = strings.Cut(out, "\n")
	return prepare, graph
}

func (w *readyWorld) shell(script string) error {
	res, err := w.m.Exec(context.Background(), w.agent.ID, sandbox.ExecRequest{Cmd: []string{"sh", "-c", script}, Dir: sandbox.HomeDir, Timeout: time.Minute})
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("%s: exit %d: %s", script, res.ExitCode, res.Stderr)
	}
	return err
}

// gitProxy is the worker's GitHub proxy as a generation opens it.
type gitProxy struct{ p *browserproxy.Proxy }

func (g gitProxy) OpenGitHub(agentID string) (string, error) { return g.p.Open(agentID) }

// stopwatch is the agent's workspace as the generation start uses it,
// timing its first call (which starts the sandbox when there is none) and
// its git command (the clone, or the pull of an existing clone). Prepare
// makes its calls one after another.
type stopwatch struct {
	sandbox.Workspace
	calls      int
	first, git time.Duration
	exit       int
	stderr     string
}

func (s *stopwatch) reset() { s.calls, s.first, s.git, s.exit, s.stderr = 0, 0, 0, 0, "" }

func (s *stopwatch) Exec(ctx context.Context, agentID string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	t0 := time.Now()
	res, err := s.Workspace.Exec(ctx, agentID, req)
	d := time.Since(t0)
	s.note(d)
	if len(req.Cmd) > 0 && req.Cmd[0] == "git" {
		s.git, s.exit, s.stderr = d, res.ExitCode, string(res.Stderr)
	}
	return res, err
}

func (s *stopwatch) CopyTo(ctx context.Context, agentID, path string, content []byte, mode fs.FileMode) error {
	t0 := time.Now()
	err := s.Workspace.CopyTo(ctx, agentID, path, content, mode)
	s.note(time.Since(t0))
	return err
}

func (s *stopwatch) note(d time.Duration) {
	if s.calls == 0 {
		s.first = d
	}
	s.calls++
}

// readyCorpus is the corpus module's folder in the module cache, the
// repository name it gets (pgx for github.com/jackc/pgx/v5) and its lines
// of Go source; the benchmark skips when the module is not there.
func readyCorpus(b *testing.B) (dir, name string, lines int) {
	b.Helper()
	mod := os.Getenv("GUILDS_READY_MODULE")
	if mod == "" {
		mod = readyModule
	}
	out, err := osexec.Command("go", "mod", "download", "-json", mod).Output() //nolint:gosec // G204: a module path of the test's own or its operator's
	var info struct{ Dir, Error string }
	if err != nil || json.Unmarshal(out, &info) != nil || info.Dir == "" {
		b.Skipf("the corpus %s is not in the module cache (go mod download -json %s: %v %s)", mod, mod, err, info.Error)
	}
	path, _, _ := strings.Cut(mod, "@")
	parts := strings.Split(path, "/")
	name = parts[len(parts)-1]
	if major.MatchString(name) && len(parts) > 1 {
		name = parts[len(parts)-2]
	}
	err = filepath.WalkDir(info.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(p) != ".go" {
			return err
		}
		src, err := os.ReadFile(p) //nolint:gosec // G304: a file of the module cache
		lines += bytes.Count(src, []byte{'\n'})
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return info.Dir, name, lines
}

// major is a module path's major version suffix.
var major = regexp.MustCompile(`^v[0-9]+$`)

// importTree makes the tree of src the only commit of the bare
// repository's main, packed as a hosted repository is (so a clone reuses
// its deltas instead of compressing every object again).
func importTree(b *testing.B, bare, src string) {
	b.Helper()
	env := append(os.Environ(), "GIT_DIR="+bare, "GIT_WORK_TREE="+src, "GIT_INDEX_FILE="+filepath.Join(b.TempDir(), "index"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=corpus", "GIT_AUTHOR_EMAIL=corpus@example.com",
		"GIT_COMMITTER_NAME=corpus", "GIT_COMMITTER_EMAIL=corpus@example.com")
	git := func(args ...string) string {
		cmd := osexec.Command("git", args...) //nolint:gosec // G204: the benchmark's own git plumbing on folders it made
		cmd.Env = env
		out, err := cmd.Output()
		if err != nil {
			b.Fatalf("git %v: %v", args, err)
		}
		return strings.TrimSpace(string(out))
	}
	git("add", "-A")
	commit := git("commit-tree", git("write-tree"), "-m", "corpus: "+filepath.Base(src))
	git("update-ref", "refs/heads/main", commit)
	git("repack", "-a", "-d", "-q")
	git("prune")
}
