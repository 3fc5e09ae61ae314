package e2e

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

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
	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/docker"
	"github.com/guilds/guilds/sandbox/dockertest"
)

// oneSandbox is an agent's workspace that is one sandbox of the driver.
type oneSandbox struct {
	d  *docker.Driver
	id string
}

func (w oneSandbox) Exec(ctx context.Context, _ string, req sandbox.ExecRequest) (sandbox.ExecResult, error) {
	return w.d.Exec(ctx, w.id, req)
}

func (w oneSandbox) CopyTo(ctx context.Context, _, path string, content []byte, mode fs.FileMode) error {
	return w.d.CopyTo(ctx, w.id, path, content, mode)
}

// hostAddress is this machine's first non-loopback IPv4 address, which a
// sandbox with the engine's network reaches it by.
func hostAddress(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP.String()
		}
	}
	dockertest.Unavailable(t, "no non-loopback address for the local GitHub to listen on")
	return ""
}

// gitProxy is the worker's GitHub proxy as a generation opens it.
type gitProxy struct{ p *browserproxy.Proxy }

func (g gitProxy) OpenGitHub(agentID string) (string, error) { return g.p.Open(agentID) }

// TestGitHubOnTheSandboxImage: on the real sandbox image, whose sandbox has
// network none, a coding generation's start clones the guild's repository
// from a local GitHub on this machine's address, reached only through the
// worker's GitHub proxy (a second socket in the agent's proxy folder, which
// dials nothing but the App's hosts) and the relay the generation starts in
// the sandbox; the agent's shell commits and pushes the same way, through
// the image's credential helper, while a credential helper the agent
// configured in its home never runs. Another host of this machine is
// refused through the same proxy and cannot be reached directly; an agent
// without GitHub repositories gets no proxy at all. The token is in no tool
// result (after the run's redaction) and not in the clone's .git/config.
func TestGitHubOnTheSandboxImage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox on the agent image")
	}
	drv, cli := dockertest.Driver(t)
	image := dockertest.AgentImage(t, cli)
	ctx := context.Background()
	addr := hostAddress(t)
	gh := githubtest.New(t, githubtest.Listen(net.JoinHostPort(addr, "0"), addr))
	inst := gh.AddInstallation("acme-gh")
	repo := gh.AddRepo(t, inst, "acme-gh", "api")
	elsewhere := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "not GitHub") }))
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatal(err)
	}
	_ = elsewhere.Listener.Close()
	elsewhere.Listener = ln
	elsewhere.Start()
	defer elsewhere.Close()
	otherHost := strings.TrimPrefix(elsewhere.URL, "http://")

	db := testdb.New(t)
	ms, err := catalog.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	if err := catalog.Seed(ctx, db, ms); err != nil {
		t.Fatal(err)
	}
	var a, lone githubapp.Agent
	if err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id),
g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'Dev' FROM o RETURNING id, organisation_id)
INSERT INTO agents (guild_id, name, config) SELECT id, 'Coder', '{"coding":true}' FROM g
RETURNING id::text, guild_id::text, (SELECT organisation_id::text FROM g)`).Scan(&a.ID, &a.GuildID, &a.OrgID); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `WITH g AS (INSERT INTO guilds (organisation_id, name) VALUES ($1, 'Docs') RETURNING id, organisation_id)
INSERT INTO agents (guild_id, name, config) SELECT id, 'Writer', '{"coding":true}' FROM g
RETURNING id::text, guild_id::text, (SELECT organisation_id::text FROM g)`, a.OrgID).Scan(&lone.ID, &lone.GuildID, &lone.OrgID); err != nil {
		t.Fatal(err)
	}
	conn := connectionstest.InsertOf(t, db, "github", "guild", a.GuildID)
	connectionstest.SetConnected(t, db, conn, "acme-gh")
	sel := []githubapp.Selected{{GitHubID: repo, Name: "api", FullName: "acme-gh/api", URL: gh.URL + "/acme-gh/api", DefaultBranch: "main"}}
	for _, err := range []error{githubapp.SaveLogin(ctx, db, conn, inst, "acme-gh"), githubapp.SetSelected(ctx, db, conn, sel),
		githubapp.SaveAccess(ctx, db, conn, []githubapp.RepoAccess{{GitHubID: repo, FullName: "acme-gh/api", Permission: githubapp.PermWrite}}, time.Now()),
		githubapp.MirrorSelection(ctx, db, a.GuildID, conn, sel)} {
		if err != nil {
			t.Fatal(err)
		}
	}

	// The worker's GitHub proxy, as cmd/guilds starts it for this App.
	hosts, private, err := githubapp.EgressHosts(gh.URL, gh.APIURL())
	if err != nil || !private || len(hosts) != 1 {
		t.Fatalf("egress hosts %v %v %v", hosts, private, err)
	}
	var g *githubapp.Generations
	proxy, err := browserproxy.New(browserproxy.Options{Dir: t.TempDir(), Socket: "git.sock", Only: hosts,
		Policy: mcpoauth.Policy{AllowLoopback: private, AllowPrivate: private},
		Serve:  func(agentID string, dial browserproxy.DialFunc) http.Handler { return g.EgressHandler(agentID, dial) }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = proxy.Close() }()
	newSandbox := func(agentID string) oneSandbox {
		t.Helper()
		binds, err := proxy.Binds(agentID)
		if err != nil {
			t.Fatal(err)
		}
		sb, err := drv.Create(ctx, sandbox.Spec{Image: image, AgentID: agentID, User: "agent", Binds: binds})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = drv.Remove(context.Background(), sb.ID) })
		return oneSandbox{d: drv, id: sb.ID}
	}
	ws := newSandbox(a.ID)
	// What gh auth setup-git, or the agent itself, leaves in its home.
	agentHelper := "[credential]\n\thelper = \"!f() { touch /home/agent/agent-helper-ran; echo username=x; echo password=stolen; }; f\"\n"
	if err := ws.CopyTo(ctx, a.ID, "/home/agent/.gitconfig", []byte(agentHelper), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := gh.Config()
	g = &githubapp.Generations{DB: db, Workspace: ws, Keyring: e2eKeyring(t), Egress: gitProxy{proxy},
		App: func() (*githubapp.Client, error) { return &githubapp.Client{Config: cfg}, nil }}
	start := time.Now()
	if _, err := g.Prepare(ctx, a); err != nil {
		t.Fatal(err)
	}
	t.Logf("generation start (token, relay, clone through the proxy): %s", time.Since(start).Round(time.Millisecond))
	res, err := ws.Exec(ctx, a.ID, sandbox.ExecRequest{Cmd: []string{"cat", "repos/api/README.md", "repos/api/.git/config"}})
	if err != nil || res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "# api") {
		t.Fatalf("the clone: %v %d %s %s", err, res.ExitCode, res.Stdout, res.Stderr)
	}
	secrets, _ := g.RunSecrets(ctx, a.ID)
	if len(secrets) != 1 || strings.Contains(string(res.Stdout), secrets[0]) {
		t.Fatalf("token in .git/config, or not remembered (%d)", len(secrets))
	}

	// The agent's shell, through the code tools and guilds-code in the image.
	reg := tools.NewRegistry()
	code.Register(reg, code.Deps{Workspace: shellWorkspace{ws, g, a}})
	red := tools.NewRedactor(secrets, nil)
	seq := 3
	shell := func(agentID, command string) string {
		t.Helper()
		seq++
		args, _ := json.Marshal(map[string]any{"command": command, "timeout_seconds": 120})
		out := reg.Invoke(ctx, tools.Call{Name: code.ToolShell, Args: args, RunID: "run-gh", AgentID: agentID, Seq: seq, CallID: "call_" + strconv.Itoa(seq)})
		return red.Redact(out)
	}
	shell(a.ID, "cd repos/api") // the working directory carries over; GH_TOKEN follows it
	// The sandbox restarted since the generation's start: the relay is gone,
	// and the next shell call starts it again.
	if res, err := ws.Exec(ctx, a.ID, sandbox.ExecRequest{Cmd: []string{"pkill", "-f", "guilds-browser --relay"}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("stop the relay: %v %d %s", err, res.ExitCode, res.Stderr)
	}
	start = time.Now()
	out := shell(a.ID, "echo change > agent.txt && git add agent.txt && "+
		"git -c user.name=agent -c user.email=agent@example.com commit -qm 'from the sandbox' && git push -q origin HEAD:main && echo pushed; "+
		"test -e /home/agent/agent-helper-ran && echo AGENT-HELPER-RAN; echo gh_token=${GH_TOKEN:+set}; git config --get-all credential."+gh.URL+".helper; "+
		"echo proxy=$HTTPS_PROXY no_proxy=$NO_PROXY; ls /sys/class/net")
	t.Logf("commit and push through the proxy (shell call, relay restarted): %s", time.Since(start).Round(time.Millisecond))
	for _, want := range []string{"pushed", "gh_token=\n", "proxy=http://127.0.0.1:3129 no_proxy=localhost,127.0.0.1\nlo"} {
		if !strings.Contains(out, want) {
			t.Fatalf("shell lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "AGENT-HELPER-RAN") || strings.Contains(out, secrets[0]) {
		t.Fatalf("the agent's helper ran, or the token reached the result:\n%s", out)
	}
	log, err := exec.Command("git", "--git-dir", gh.GitDir(repo), "log", "-1", "--format=%s", "main").Output()
	if err != nil || string(log) != "from the sandbox\n" {
		t.Fatalf("pushed %q %v", log, err)
	}
	// The token is nowhere in the sandbox: the proxy adds it (before redaction).
	seq++
	args, _ := json.Marshal(map[string]any{"command": "env; cat /run/guilds/git-tokens.json; git config --list"})
	if out := reg.Invoke(ctx, tools.Call{Name: code.ToolShell, Args: args, RunID: "run-gh", AgentID: a.ID, Seq: seq, CallID: "call_env"}); strings.Contains(out, secrets[0]) {
		t.Fatalf("the token reached the sandbox:\n%s", out)
	}
	// Another host of this machine: refused by the same proxy, unreachable
	// without it.
	out = shell(a.ID, "git ls-remote http://"+otherHost+"/x.git 2>&1; echo; "+
		"exec 3<>/dev/tcp/127.0.0.1/3129 && printf 'CONNECT "+otherHost+" HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n' >&3 && timeout 10 cat <&3; "+
		"git -c http.proxy= ls-remote "+gh.URL+"/acme-gh/api.git >/dev/null 2>&1 || echo direct-refused")
	for _, want := range []string{"403", "refused: this proxy reaches only GitHub", "not " + otherHost, "tunnels are not served", "direct-refused"} {
		if !strings.Contains(out, want) {
			t.Errorf("another host lacks %q:\n%s", want, out)
		}
	}

	// An agent of a guild without GitHub repositories: no proxy, no relay,
	// no socket opened for it.
	wl := newSandbox(lone.ID)
	gl := &githubapp.Generations{DB: db, Workspace: wl, Keyring: e2eKeyring(t), Egress: gitProxy{proxy},
		App: func() (*githubapp.Client, error) { return &githubapp.Client{Config: cfg}, nil }}
	if _, err := gl.Prepare(ctx, lone); err != nil {
		t.Fatal(err)
	}
	regl := tools.NewRegistry()
	code.Register(regl, code.Deps{Workspace: shellWorkspace{wl, gl, lone}})
	args, _ = json.Marshal(map[string]any{"command": "env | grep -ic proxy; ls /run/guilds-proxy; pgrep -fc 'guilds-browser [-]-relay' || true"})
	if out := regl.Invoke(ctx, tools.Call{Name: code.ToolShell, Args: args, RunID: "run-lone", AgentID: lone.ID, Seq: 1, CallID: "call_1"}); !strings.Contains(out, "0\n0") || strings.Contains(out, "git.sock") {
		t.Errorf("an agent without GitHub repositories:\n%s", out)
	}
}

// shellWorkspace is one sandbox whose shell calls run the generation's
// BeforeShell first, as the worker's workspace does.
type shellWorkspace struct {
	oneSandbox
	g *githubapp.Generations
	a githubapp.Agent
}

func (w shellWorkspace) BeforeShell(ctx context.Context, agentID string) error {
	return w.g.BeforeShell(ctx, agentID, func(context.Context) (githubapp.Agent, error) { return w.a, nil })
}

// TestGitHubCodingRunDeployed is the App end to end on the deployed
// platform: the operator connects GitHub for a guild through the browser
// (install page, callback), selects a repository, and a coding agent's run
// starts with its token held by the worker's GitHub route, not the sandbox,
// whose shell prints the tokens file (no token) and an empty GH_TOKEN; the
// run's end revokes the token. No token reaches the transcript, what the model
// received, the run's Temporal history or a log line: every one is redacted.
// The deployed sandbox has no network: the generation's clone of the local
// GitHub (on this machine's address) goes through the worker's GitHub proxy,
// which the tokens file names.
func TestGitHubCodingRunDeployed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes and a sandbox")
	}
	cli := dockertest.Client(t)
	image := dockertest.AgentImage(t, cli)
	addr := hostAddress(t)
	gh := githubtest.New(t, githubtest.Listen(net.JoinHostPort(addr, "0"), addr))
	inst := gh.AddInstallation("acme-gh")
	gh.AddRepo(t, inst, "acme-gh", "api")
	gh.AddUser("octo", inst)

	model := newScriptedModel(t, boxModelKey,
		[]toolCall{{"shell", map[string]any{"command": "cat /run/guilds/git-tokens.json; echo; ls -A repos || true"}}},
		// GH_TOKEN follows the working directory a command starts in.
		[]toolCall{{"shell", map[string]any{"command": "mkdir -p repos/api && cd repos/api && echo gh=$GH_TOKEN"}}},
		[]toolCall{{"shell", map[string]any{"command": "echo again=$GH_TOKEN; git config --get-all credential." + gh.URL + ".helper; " +
			"echo guilds_vars=$(env | grep -c '^GUILDS_')"}}},
		nil,
		nil) // the second run fails at start: no turn is taken
	env := gh.Env()
	for k, v := range map[string]string{"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL,
		"GUILDS_SANDBOX_DRIVER": "docker", "GUILDS_SANDBOX_IMAGE": image} {
		env[k] = v
	}
	d := deploy(t, env)
	d.secrets = append(d.secrets, gh.ClientSecret)
	gh.BrowserUser, gh.CallbackURL, gh.Installing = "octo", d.API+"/api/mcp/oauth/callback", inst

	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Dev"})["id"].(string)
	agent := d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Coder",
		"config": map[string]any{"coding": true}})["id"].(string)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = cli.VolumeRemove(ctx, workspaces.HomeVolume(agent), true)
	})

	conn := d.must(200, "POST", "/api/mcp/connect", map[string]any{"slug": "github", "owner_scope": "guild", "owner_id": guild})
	id := conn["connection"].(map[string]any)["id"].(string)
	resp, err := d.Browser.Get(conn["authorization_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	if body := readAll(resp); resp.StatusCode != 200 || !strings.Contains(body, `"acme-gh"`) {
		t.Fatalf("install and callback: %d %s\n%s", resp.StatusCode, body, d.Logs())
	}
	var repos []map[string]any
	if err := json.Unmarshal(d.Call("GET", "/api/mcp/connections/"+id+"/github/repositories", nil).Body, &repos); err != nil || len(repos) != 1 {
		t.Fatalf("repositories %v %v", repos, err)
	}
	d.must(200, "PUT", "/api/mcp/connections/"+id+"/github/selected", map[string]any{"repositories": []map[string]any{
		{"name": "api", "url": repos[0]["url"]}}})
	if gr := d.Call("GET", "/api/guilds/"+guild+"/repositories", nil); !strings.Contains(string(gr.Body), `"github_id"`) {
		t.Fatalf("guild repositories %s", gr.Body)
	}

	runID := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Look at the repositories."})["id"].(string)
	transcript := d.waitRun(runID)
	tokens := gh.IssuedTokens()
	if len(tokens) < 2 { // one to list the repositories, one for the generation
		t.Fatalf("tokens issued: %d\n%s", len(tokens), d.Logs())
	}
	for _, want := range []string{`"helper":"/usr/local/bin/guilds-git-credential"`, `"proxy":"http://127.0.0.1:3129"`,
		`"proxy_socket":"/run/guilds-proxy/git.sock"`, `}\napi\n`, `"tokens":[]`, `gh=\n\n`, `again=\n`, "/usr/local/bin/guilds-git-credential", "guilds_vars=0"} {
		if !strings.Contains(transcript, strings.ReplaceAll(want, `"`, `\"`)) && !strings.Contains(transcript, want) {
			t.Errorf("the transcript lacks %s:\n%s", want, transcript)
		}
	}
	// The run's end revokes the generation's token (ADR 0705), after the
	// run's status is stored: waitRun can see the status first.
	waitFor(t, "the run's end revoking the generation's token", func() bool { return len(gh.RevokedTokens()) > 0 })
	places := map[string]string{
		"the transcript":          transcript,
		"what the model received": model.Received(),
		"the run's history":       withPayloads(d.history("run-" + runID)),
		"the install's history":   withPayloads(d.history("githubinstall-" + id)),
		"the logs":                d.Logs(),
	}
	for place, text := range places {
		for _, s := range append(tokens, d.secrets...) {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("%s holds a token or key (%.8s…)", place, s)
			}
		}
	}

	// The App is uninstalled: the next coding run fails at start, saying so,
	// and the login is disconnected.
	gh.Remove(inst)
	runID = d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Again."})["id"].(string)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		run, _ := d.Call("GET", "/api/runs/"+runID, nil).Map()["run"].(map[string]any)
		if run["status"] == "failed" {
			if msg, _ := run["error"].(string); !strings.Contains(msg, "acme-gh") || !strings.Contains(msg, "disconnected") {
				t.Fatalf("the failed run says %q", msg)
			}
			break
		}
		if run["status"] == "completed" || time.Now().After(deadline) {
			t.Fatalf("the run after the removal: %v\n%s", run, d.Logs())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if c := d.must(200, "GET", "/api/mcp/connections/"+id, nil); c["status"] != "disconnected" {
		t.Fatalf("the login after the removal: %v", c)
	}
}

// e2eKeyring is a fresh credential key for a test that builds platform parts
// in-process.
func e2eKeyring(t *testing.T) *secret.Keyring {
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
