package scripts_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/native/scripts"
	"github.com/guilds/guilds/internal/native/scripts/runproto"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/dockertest"
)

// The script tools on the real sandbox image, on the engine at DOCKER_HOST
// (Podman: scripts/podman-up.sh, then make sandbox-image); skipped without
// them, failed when CI is set.

type env struct {
	t                 testing.TB
	db                *pgxpool.Pool
	mgr               *workspaces.Manager
	reg               *tools.Registry
	kr                *secret.Keyring
	org, guild, agent string
	seq               int
}

func newEnv(t testing.TB, timeout time.Duration) *env {
	t.Helper()
	drv, cli := dockertest.Driver(t)
	image := dockertest.AgentImage(t, cli)
	db := testdb.New(t)
	ctx := context.Background()
	e := &env{t: t, db: db}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&e.org))
	must(db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'Ops') RETURNING id`, e.org).Scan(&e.guild))
	// Default config: scripting on, coding off, max_scripts 10.
	must(db.QueryRow(ctx, `INSERT INTO agents (guild_id, name) VALUES ($1, 'Scripter') RETURNING id`, e.guild).Scan(&e.agent))
	entry, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(entry)
	must(err)
	e.kr = kr
	log := slog.New(slog.DiscardHandler)
	e.mgr = workspaces.New(drv, workspaces.Options{Image: image, Logger: log})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = e.mgr.RemoveHome(ctx, e.agent)
		_ = e.mgr.Close(ctx)
	})
	e.reg = tools.NewRegistry(tools.WithLogger(log))
	scripts.Register(e.reg, scripts.Deps{DB: db, Workspace: e.mgr, Env: agentsecrets.Source{DB: db, Keyring: kr}, Timeout: timeout, Log: log})
	return e
}

func (e *env) newRun() string {
	e.t.Helper()
	r, err := runs.Create(context.Background(), e.db, runs.NewRun{AgentID: e.agent, GuildID: e.guild, OrganisationID: e.org,
		Trigger: "direct", Budget: 100, Message: "scripts"})
	if err != nil {
		e.t.Fatal(err)
	}
	return r.ID
}

func (e *env) call(run, tool string, args any) (string, map[string]any) {
	e.t.Helper()
	raw, _ := json.Marshal(args)
	e.seq += 2
	ctx, recorded := tools.WithMetadata(context.Background())
	out := e.reg.Invoke(ctx, tools.Call{Name: tool, Args: raw, RunID: run, AgentID: e.agent, Seq: e.seq, CallID: fmt.Sprintf("call_%d", e.seq)})
	return out, recorded()
}

func (e *env) ok(run, tool string, args any) (string, map[string]any) {
	e.t.Helper()
	out, meta := e.call(run, tool, args)
	if strings.HasPrefix(out, "ERROR") {
		e.t.Fatalf("%s %v: %s", tool, args, out)
	}
	return out, meta
}

func (e *env) fails(run, tool string, args any, want string) {
	e.t.Helper()
	if out, _ := e.call(run, tool, args); !strings.HasPrefix(out, "ERROR: ") || !strings.Contains(out, want) {
		e.t.Fatalf("%s %v: want ERROR with %q, got %s", tool, args, want, out)
	}
}

// sh runs a command in the sandbox the way no agent tool does, to look.
func (e *env) sh(cmd string) string {
	e.t.Helper()
	res, err := e.mgr.Exec(context.Background(), e.agent, sandbox.ExecRequest{Cmd: []string{"bash", "-c", cmd}})
	if err != nil {
		e.t.Fatal(err)
	}
	return strings.TrimSpace(string(res.Stdout) + string(res.Stderr))
}

func (e *env) rows() int {
	e.t.Helper()
	var n int
	if err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM artifacts WHERE kind = 'script'`).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

const echoPy = "import json, os, sys\nargs = json.load(sys.stdin)\nprint('args', json.dumps(args, sort_keys=True))\nprint('cwd', os.getcwd())\nprint('token', os.environ.get('API_TOKEN', '-'))\n"

func TestCreateRunReadListDeleteOnTheSandboxImage(t *testing.T) {
	e := newEnv(t, 0)
	ctx := context.Background()
	owner, err := agentsecrets.LoadPlace(ctx, e.db, agentsecrets.ScopeAgent, e.agent)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := agentsecrets.Set(ctx, e.db, e.kr, owner, "API_TOKEN", "tok-123456", "test"); err != nil {
		t.Fatal(err)
	}
	run := e.newRun()
	// The model's shell is a cd away from /home/agent: scripts still start there.
	out, _ := e.ok(run, scripts.ToolCreate, map[string]any{"name": "echo", "description": "print my arguments", "source": echoPy})
	if !strings.HasPrefix(out, "created script echo (") || !strings.Contains(out, "at /home/agent/scripts/echo.py") {
		t.Fatalf("create: %s", out)
	}
	if got := e.sh("cat /home/agent/scripts/echo.py"); got != strings.TrimSpace(echoPy) {
		t.Fatalf("materialised file: %q", got)
	}
	out, meta := e.ok(run, scripts.ToolRun, map[string]any{"name": "echo", "arguments": map[string]any{"b": 2, "a": "x"}})
	if !strings.HasPrefix(out, "args {\"a\": \"x\", \"b\": 2}\ncwd /home/agent\ntoken tok-123456\ntime: ") {
		t.Fatalf("run: %q", out)
	}
	if meta["exit_code"] != float64(0) || meta["script"] != "echo" || meta["script_hash"] != scripts.Hash(echoPy) || meta["duration_ms"] == nil {
		t.Fatalf("run metadata %v", meta)
	}
	if out, _ = e.ok(run, scripts.ToolRun, map[string]any{"name": "echo"}); !strings.HasPrefix(out, "args {}\n") {
		t.Fatalf("run without arguments: %q", out)
	}
	// No request file (it held the secret) is left behind.
	if left := e.sh("ls -A /run/guilds/requests 2>/dev/null | wc -l"); left != "0" {
		t.Fatalf("%s request files left", left)
	}

	e.ok(run, scripts.ToolCreate, map[string]any{"name": "fail", "description": "exit 3", "source": "import sys\nprint('bad input', file=sys.stderr)\nsys.exit(3)\n"})
	out, meta = e.ok(run, scripts.ToolRun, map[string]any{"name": "fail"})
	if !strings.HasPrefix(out, "bad input\nexit_code: 3\ntime: ") || meta["exit_code"] != float64(3) {
		t.Fatalf("failing script: %q %v", out, meta)
	}

	if src, _ := e.ok(run, scripts.ToolRead, map[string]any{"name": "echo"}); src != echoPy {
		t.Fatalf("read: %q", src)
	}
	list, _ := e.ok(run, scripts.ToolList, map[string]any{})
	var l struct {
		Scripts []struct{ Name, Description, ThisRun string }
	}
	if err := json.Unmarshal([]byte(list), &l); err != nil || len(l.Scripts) != 2 || l.Scripts[0].Name != "echo" || l.Scripts[0].Description != "print my arguments" || l.Scripts[0].ThisRun != "" {
		t.Fatalf("list: %s (%v)", list, err)
	}

	// script_delete mid-run: the row, the file and the name in this run go.
	if out, _ := e.ok(run, scripts.ToolDelete, map[string]any{"name": "echo"}); out != "deleted script echo" {
		t.Fatalf("delete: %s", out)
	}
	if got := e.sh("ls /home/agent/scripts"); got != "fail.py" {
		t.Fatalf("after delete the sandbox holds %q", got)
	}
	if _, err := scripts.Get(ctx, e.db, e.agent, "echo"); err == nil {
		t.Fatal("the row survived script_delete")
	}
	if _, ok, _ := scripts.RunEntry(ctx, e.db, run, "echo"); ok {
		t.Fatal("the run's snapshot still holds echo")
	}
	e.fails(run, scripts.ToolRun, map[string]any{"name": "echo"}, "404 script echo not found")
	e.fails(run, scripts.ToolRead, map[string]any{"name": "echo"}, "404 script echo not found")
	e.fails(run, scripts.ToolDelete, map[string]any{"name": "echo"}, "404 script echo not found")
}

func TestRefusalsLeaveNoRowAndNoFile(t *testing.T) {
	e := newEnv(t, 0)
	run := e.newRun()
	ok := map[string]any{"name": "ok", "description": "fine", "source": "print(1)\n"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range ok {
			m[kk] = vv
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{with("name", "Upper"), `422 name "Upper" must match`},
		{with("name", "9lives"), `422 name "9lives" must match`},
		{with("name", "a/b"), `422 name "a/b" must match`},
		{with("name", "x"+strings.Repeat("y", 63)), "422 name"},
		{with("name", "manifest"), `422 name "manifest" is reserved`},
		{with("name", ""), "422 name is required"},
		{with("description", nil), "description"},
		{with("description", "  "), "422 description is required"},
		{with("description", strings.Repeat("é", 401)), "422 description is 401 characters; at most 400"},
		{with("source", ""), "422 source is required"},
		{with("source", strings.Repeat("#", scripts.MaxSource+1)), "422 source is 60001 bytes; at most 60000"},
		{with("parameters", map[string]any{"type": "string"}), `422 parameters must be a schema of "type": "object"`},
		{with("parameters", map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "nope"}}}), "422 parameters is not a usable JSON Schema"},
	} {
		e.fails(run, scripts.ToolCreate, c.args, c.want)
	}
	e.fails(run, scripts.ToolRun, map[string]any{"name": "Nope"}, `422 name "Nope" must match`)
	e.fails(run, scripts.ToolRun, map[string]any{"name": "ok", "arguments": []int{1}}, "invalid arguments")
	if n := e.rows(); n != 0 {
		t.Fatalf("refused creates left %d rows", n)
	}
	if got := e.sh("ls -A /home/agent/scripts 2>/dev/null | wc -l"); got != "0" {
		t.Fatalf("refused creates left files: %s", got)
	}

	// max_scripts: a new name past the limit is refused; replacing is not.
	if _, err := e.db.Exec(context.Background(), `UPDATE agents SET config = '{"max_scripts":2}' WHERE id = $1`, e.agent); err != nil {
		t.Fatal(err)
	}
	e.ok(run, scripts.ToolCreate, with("name", "one"))
	e.ok(run, scripts.ToolCreate, with("name", "two"))
	e.fails(run, scripts.ToolCreate, with("name", "three"), "422 this agent already has 2 scripts, its max_scripts (2)")
	replace := with("name", "one")
	replace["source"] = "print(2)\n"
	if out, _ := e.ok(run, scripts.ToolCreate, replace); !strings.HasPrefix(out, "replaced script one") {
		t.Fatalf("replace at the limit: %s", out)
	}
	if got := e.sh("ls /home/agent/scripts | tr '\\n' ' '"); got != "one.py two.py" {
		t.Fatalf("files: %q", got)
	}
	if got := e.sh("cat /home/agent/scripts/one.py"); got != "print(2)" {
		t.Fatalf("replaced file: %q", got)
	}
	if _, err := e.db.Exec(context.Background(), `UPDATE agents SET config = '{"scripting":false}' WHERE id = $1`, e.agent); err != nil {
		t.Fatal(err)
	}
	e.fails(run, scripts.ToolList, map[string]any{}, "403 scripting is off for this agent")
}

func TestSnapshotStaysTheSameForTheRun(t *testing.T) {
	e := newEnv(t, 0)
	ctx := context.Background()
	agent, err := orgs.LoadAgent(ctx, e.db, e.agent)
	if err != nil {
		t.Fatal(err)
	}
	put := func(src string) {
		t.Helper()
		name := "ver"
		if strings.Contains(src, "late") {
			name = "late"
		}
		in := scripts.Input{Name: name, Description: "which version", Source: src}
		if err := in.Check(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := scripts.Create(ctx, e.db, agent, in, nil); err != nil {
			t.Fatal(err)
		}
	}
	put("print('v1')\n")
	runA := e.newRun()
	if err := scripts.TakeSnapshot(ctx, e.db, runA, e.agent); err != nil {
		t.Fatal(err)
	}
	// The row changes (another run, the operator), and so does the file.
	put("print('v2')\n")
	if err := e.mgr.CopyTo(ctx, e.agent, runproto.Path("ver"), []byte("print('edited')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, _ := e.ok(runA, scripts.ToolRun, map[string]any{"name": "ver"}); !strings.HasPrefix(out, "v1\n") {
		t.Fatalf("run A after the change: %q", out)
	}
	if src, _ := e.ok(runA, scripts.ToolRead, map[string]any{"name": "ver"}); src != "print('v1')\n" {
		t.Fatalf("run A reads %q", src)
	}
	list, _ := e.ok(runA, scripts.ToolList, map[string]any{})
	if !strings.Contains(list, "changed since this run started") {
		t.Fatalf("list: %s", list)
	}
	runB := e.newRun()
	if out, _ := e.ok(runB, scripts.ToolRun, map[string]any{"name": "ver"}); !strings.HasPrefix(out, "v2\n") {
		t.Fatalf("run B: %q", out)
	}
	// The operator deletes the row: run A keeps its copy, a new run has none.
	if err := scripts.Delete(ctx, e.db, e.agent, "ver"); err != nil {
		t.Fatal(err)
	}
	if out, _ := e.ok(runA, scripts.ToolRun, map[string]any{"name": "ver"}); !strings.HasPrefix(out, "v1\n") {
		t.Fatalf("run A after the row went: %q", out)
	}
	e.fails(e.newRun(), scripts.ToolRun, map[string]any{"name": "ver"}, "404 script ver not found")
	// A script saved after a run started is not in that run.
	put("print('late')\n")
	e.fails(runB, scripts.ToolRun, map[string]any{"name": "late"}, "422 script late was saved after this run started: it runs from the next run")
}

func TestTimeoutEndsWithExit124(t *testing.T) {
	e := newEnv(t, 2*time.Second)
	run := e.newRun()
	e.ok(run, scripts.ToolCreate, map[string]any{"name": "slow", "description": "sleeps", "source": "import time\nprint('started', flush=True)\ntime.sleep(300)\n"})
	out, meta := e.ok(run, scripts.ToolRun, map[string]any{"name": "slow"})
	if meta["exit_code"] != float64(124) || meta["timed_out"] != true ||
		!strings.Contains(out, "started\n[timed out after 2s: the command's process group got SIGTERM]\nexit_code: 124\ntime: ") {
		t.Fatalf("%q %v", out, meta)
	}
	if ps := e.sh("pgrep -f 'python3 .*[s]low[.]py' || true"); ps != "" {
		t.Fatalf("the script outlived its timeout: %s", ps)
	}
}

func TestParametersMakeATool(t *testing.T) {
	e := newEnv(t, 0)
	ctx := context.Background()
	params := map[string]any{"type": "object", "properties": map[string]any{
		"who":   map[string]any{"type": "string", "description": "whom to greet"},
		"times": map[string]any{"type": "integer", "minimum": 1, "maximum": 3},
		"note":  map[string]any{"type": "string", "format": "email"},
	}, "required": []string{"who"}, "additionalProperties": false}
	first := e.newRun()
	out, _ := e.ok(first, scripts.ToolCreate, map[string]any{"name": "greet", "description": "greet someone", "parameters": params,
		"source": "import json, sys\na = json.load(sys.stdin)\nprint(('hello ' + a['who'] + ' ') * a.get('times', 1))\n"})
	if !strings.Contains(out, "from your next run it is also the tool greet") {
		t.Fatalf("create: %s", out)
	}
	e.ok(first, scripts.ToolCreate, map[string]any{"name": "plain", "description": "no parameters", "source": "print(0)\n"})

	next := e.newRun()
	if err := scripts.TakeSnapshot(ctx, e.db, next, e.agent); err != nil {
		t.Fatal(err)
	}
	offered, warnings, err := scripts.OfferedTools(ctx, e.db, next, map[string]bool{"shell": true})
	if err != nil || len(offered) != 1 || len(warnings) != 0 {
		t.Fatalf("offered %+v warnings %v (%v)", offered, warnings, err)
	}
	tool := offered[0]
	if tool.Name != "greet" || tool.Kind != scripts.KindScript || tool.Class != string(scripts.RunClass) || !strings.HasPrefix(tool.Description, "greet someone") {
		t.Fatalf("tool %+v", tool)
	}
	// Shaped like any tool: no additionalProperties or optional format for the model; the original validates.
	if s := string(tool.ShapedSchema); strings.Contains(s, "additionalProperties") || strings.Contains(s, "email") || !strings.Contains(s, tools.OmitHint) {
		t.Fatalf("shaped %s", s)
	}
	if !strings.Contains(string(tool.Schema), `"additionalProperties": false`) {
		t.Fatalf("schema %s", tool.Schema)
	}
	for args, want := range map[string]string{
		`{"times":2}`:                 "who",
		`{"who":"Ada","times":9}`:     "times",
		`{"who":"Ada","extra":1}`:     "extra",
		`{"who":"Ada","note":"nope"}`: "note",
	} {
		_, err := scripts.RunArgs(tool, json.RawMessage(args))
		var ae *tools.ArgumentError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: want an argument error naming %s, got %v", args, want, err)
		}
	}
	runArgs, err := scripts.RunArgs(tool, json.RawMessage(`{"who":"Ada","times":2,"note":""}`))
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := e.ok(next, scripts.ToolRun, json.RawMessage(runArgs)); !strings.HasPrefix(out, "hello Ada hello Ada \ntime: ") {
		t.Fatalf("greet as a tool: %q", out)
	}
	// script_run checks the same schema.
	e.fails(next, scripts.ToolRun, map[string]any{"name": "greet", "arguments": map[string]any{"times": 1}}, "422 arguments of script greet")
	// A name another tool of the run takes is not offered, with a warning.
	_, warnings, _ = scripts.OfferedTools(ctx, e.db, next, map[string]bool{"greet": true})
	if len(warnings) != 1 || !strings.Contains(warnings[0], "script greet is not offered as a tool") {
		t.Fatalf("warnings %v", warnings)
	}
}
