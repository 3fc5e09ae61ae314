package e2e

import (
	"context"
	"encoding/json"
	"io/fs"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/githubapp/githubtest"
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
	t.Skip("no non-loopback address for a sandbox to reach the local GitHub by")
	return ""
}

// TestGitHubOnTheSandboxImage: on the real sandbox image, a coding
// generation's start clones the guild's repository through the image's
// credential helper, and the agent's shell commits and pushes through it
// while a credential helper the agent configured in its home never runs;
// the token is in no tool result (after the run's redaction) and not in the
// clone's .git/config. The sandbox gets the engine's network for this test
// only, to reach a local GitHub on this machine (sandboxes have none).
func TestGitHubOnTheSandboxImage(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a sandbox on the agent image")
	}
	drv, cli := dockertest.Driver(t)
	image := dockertest.AgentImage(t, cli)
	ctx := context.Background()
	gh := githubtest.New(t, githubtest.Listen("0.0.0.0:0", hostAddress(t)))
	inst := gh.AddInstallation("acme-gh")
	repo := gh.AddRepo(t, inst, "acme-gh", "api")

	db := testdb.New(t)
	ms, err := catalog.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	if err := catalog.Seed(ctx, db, ms); err != nil {
		t.Fatal(err)
	}
	var a githubapp.Agent
	if err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id),
g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'Dev' FROM o RETURNING id, organisation_id)
INSERT INTO agents (guild_id, name, config) SELECT id, 'Coder', '{"coding":true}' FROM g
RETURNING id::text, guild_id::text, (SELECT organisation_id::text FROM g)`).Scan(&a.ID, &a.GuildID, &a.OrgID); err != nil {
		t.Fatal(err)
	}
	conn := connectionstest.InsertOf(t, db, "github", "guild", a.GuildID)
	connectionstest.SetConnected(t, db, conn, "acme-gh")
	sel := []githubapp.Selected{{GitHubID: repo, Name: "api", FullName: "acme-gh/api", URL: gh.URL + "/acme-gh/api", DefaultBranch: "main"}}
	for _, err := range []error{githubapp.SaveLogin(ctx, db, conn, inst, "acme-gh"), githubapp.SetSelected(ctx, db, conn, sel),
		githubapp.MirrorSelection(ctx, db, a.GuildID, conn, sel)} {
		if err != nil {
			t.Fatal(err)
		}
	}

	sb, err := drv.Create(ctx, sandbox.Spec{Image: image, AgentID: a.ID, Network: true, User: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = drv.Remove(context.Background(), sb.ID) })
	ws := oneSandbox{d: drv, id: sb.ID}
	// What gh auth setup-git, or the agent itself, leaves in its home.
	agentHelper := "[credential]\n\thelper = \"!f() { touch /home/agent/agent-helper-ran; echo username=x; echo password=stolen; }; f\"\n"
	if err := ws.CopyTo(ctx, a.ID, "/home/agent/.gitconfig", []byte(agentHelper), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := gh.Config()
	g := &githubapp.Generations{DB: db, Workspace: ws, Keyring: e2eKeyring(t), App: func() (*githubapp.Client, error) { return &githubapp.Client{Config: cfg}, nil }}
	if _, err := g.Prepare(ctx, a); err != nil {
		t.Fatal(err)
	}
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
	code.Register(reg, code.Deps{Workspace: ws})
	red := tools.NewRedactor(secrets, nil)
	shell := func(command string) string {
		t.Helper()
		args, _ := json.Marshal(map[string]any{"command": command, "timeout_seconds": 120})
		out := reg.Invoke(ctx, tools.Call{Name: code.ToolShell, Args: args, RunID: "run-gh", AgentID: a.ID, Seq: 3, CallID: "call_3"})
		return red.Redact(out)
	}
	shell("cd repos/api") // the working directory carries over; GH_TOKEN follows it
	out := shell("echo change > agent.txt && git add agent.txt && " +
		"git -c user.name=agent -c user.email=agent@example.com commit -qm 'from the sandbox' && git push -q origin HEAD:main && echo pushed; " +
		"test -e /home/agent/agent-helper-ran && echo AGENT-HELPER-RAN; echo gh_token=${GH_TOKEN:+set}; git config --get-all credential." + gh.URL + ".helper")
	if !strings.Contains(out, "pushed") || strings.Contains(out, "AGENT-HELPER-RAN") || !strings.Contains(out, "gh_token=set") {
		t.Fatalf("shell:\n%s", out)
	}
	if strings.Contains(out, secrets[0]) {
		t.Fatal("the token reached the result")
	}
	log, err := exec.Command("git", "--git-dir", gh.GitDir(repo), "log", "-1", "--format=%s", "main").Output()
	if err != nil || string(log) != "from the sandbox\n" {
		t.Fatalf("pushed %q %v", log, err)
	}
	// Printing GH_TOKEN gives the redaction marker in what the run stores.
	if out := shell("echo $GH_TOKEN"); strings.Contains(out, secrets[0]) || !strings.Contains(out, tools.RedactionMarker) {
		t.Fatalf("GH_TOKEN printed as: %q", out)
	}
}

// TestGitHubCodingRunDeployed is the App end to end on the deployed
// platform: the operator connects GitHub for a guild through the browser
// (install page, callback), selects a repository, and a coding agent's run
// starts with an installation token in its sandbox, whose shell prints the
// tokens file and GH_TOKEN. No token reaches the transcript, what the model
// received, the run's Temporal history or a log line: every one is redacted.
// (The deployed sandbox has no network, so its clone of the local GitHub
// fails and is logged; TestGitHubOnTheSandboxImage covers git itself.)
func TestGitHubCodingRunDeployed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes and a sandbox")
	}
	cli := dockertest.Client(t)
	image := dockertest.AgentImage(t, cli)
	gh := githubtest.New(t)
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
	for _, want := range []string{`"helper":"/usr/local/bin/guilds-git-credential"`, `gh=\n\n`, "again=[REDACTED]", "/usr/local/bin/guilds-git-credential", "guilds_vars=0"} {
		if !strings.Contains(transcript, strings.ReplaceAll(want, `"`, `\"`)) && !strings.Contains(transcript, want) {
			t.Errorf("the transcript lacks %s:\n%s", want, transcript)
		}
	}
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
