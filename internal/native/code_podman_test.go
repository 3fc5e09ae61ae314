package native_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/internal/native/code"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/docker"
	"github.com/guilds/guilds/sandbox/dockertest"
)

// The code tools on the real sandbox image, on the engine at DOCKER_HOST
// (Podman in CI: scripts/podman-up.sh, then make sandbox-image); skipped
// without them, failed when CI is set.

// podman returns a docker driver with a scope of its own and the agent
// sandbox image.
func podman(t testing.TB) (*docker.Driver, string) {
	t.Helper()
	d, cli := dockertest.Driver(t)
	return d, dockertest.AgentImage(t, cli)
}

// codeRun is one run of one agent calling the code tools through the native
// registry the way the tool activity does: metadata recorded and the call
// stored at its seq, so later reads see the earlier ones.
type codeRun struct {
	t     testing.TB
	reg   *tools.Registry
	db    *pgxpool.Pool
	run   runs.Run
	agent string
	seq   int
	mgr   *workspaces.Manager
	drv   *docker.Driver
}

func newCodeRun(t testing.TB) *codeRun {
	t.Helper()
	drv, image := podman(t)
	db := testdb.New(t)
	ctx := context.Background()
	var org, guild, agent string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'Ops') RETURNING id`, org).Scan(&guild); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, config) VALUES ($1, 'Coder', '{"coding":true}') RETURNING id`, guild).Scan(&agent); err != nil {
		t.Fatal(err)
	}
	r, err := runs.Create(ctx, db, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "direct", Budget: 200, Message: "code"})
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	mgr := workspaces.New(drv, workspaces.Options{Image: image, Logger: log})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = mgr.RemoveHome(ctx, agent)
		_ = mgr.Close(ctx)
	})
	reg := native.Registry(db, log, native.WithWorkspace(mgr))
	return &codeRun{t: t, reg: reg, db: db, run: r, agent: agent, seq: 1, mgr: mgr, drv: drv}
}

// call runs one tool call and stores it; it returns the raw result and the
// metadata the call recorded.
func (c *codeRun) call(tool string, args any) (string, map[string]any) {
	c.t.Helper()
	raw, ok := args.(string)
	if !ok {
		b, _ := json.Marshal(args)
		raw = string(b)
	}
	c.seq += 2
	ctx, recorded := tools.WithMetadata(context.Background())
	callID := fmt.Sprintf("call_%d", c.seq)
	out := c.reg.Invoke(ctx, tools.Call{Name: tool, Args: json.RawMessage(raw), RunID: c.run.ID, AgentID: c.agent, Seq: c.seq, CallID: callID})
	meta := recorded()
	metaJSON, _ := json.Marshal(meta)
	outcome := runs.OutcomeOK
	if strings.HasPrefix(out, "ERROR: ") {
		outcome = runs.OutcomeError
	}
	now := time.Now()
	if _, _, err := runs.SaveToolCall(context.Background(), c.db, runs.ToolCall{RunID: c.run.ID, Seq: c.seq, CallID: callID,
		Tool: tool, Arguments: raw, Result: out, Outcome: outcome, StartedAt: now, FinishedAt: now, Metadata: metaJSON}); err != nil {
		c.t.Fatal(err)
	}
	return out, meta
}

// sh runs a shell command that must succeed and returns its output.
func (c *codeRun) sh(command string) string {
	c.t.Helper()
	out, meta := c.call(code.ToolShell, map[string]any{"command": command})
	if strings.HasPrefix(out, "ERROR: ") || num(meta["exit_code"]) != 0 {
		c.t.Fatalf("shell %q: %s", command, out)
	}
	return out
}

func num(v any) int {
	switch n := v.(type) {
	case float64:
		return int(n)
	case int:
		return n
	}
	return -1
}

func mustContain(t testing.TB, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

// The whole tool set on the real image, one agent's workspace, one run.
func TestCodeToolsOnTheSandboxImage(t *testing.T) {
	c := newCodeRun(t)

	t.Run("shell environment", func(t *testing.T) {
		out := c.sh("env | sort; echo; id -un; pwd")
		mustContain(t, "env", out, "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "NO_COLOR=1", "TERM=dumb",
			"DEBIAN_FRONTEND=noninteractive", "GUILD_RUN_ID="+c.run.ID, "GUILD_AGENT_ID="+c.agent, "agent", "/home/agent")
		for _, leak := range []string{"DATABASE_URL", "GUILDS_ENCRYPTION_KEY", "OPENROUTER", "TEMPORAL", "DOCKER_HOST", "REDIS_URL"} {
			if strings.Contains(out, leak) {
				t.Errorf("the sandbox environment names %s:\n%s", leak, out)
			}
		}
		if out := c.sh("cat < /dev/stdin | wc -c"); strings.TrimSpace(out) != "0" {
			t.Errorf("stdin is not closed: %q", out)
		}
	})

	t.Run("exit code and cwd", func(t *testing.T) {
		out, meta := c.call(code.ToolShell, map[string]any{"command": "mkdir -p proj/sub && cd proj/sub && false"})
		if !strings.HasSuffix(out, "exit_code: 1") || num(meta["exit_code"]) != 1 || meta["cwd"] != "/home/agent/proj/sub" {
			t.Fatalf("%q %v", out, meta)
		}
		if out := c.sh("export FOO=bar; pwd"); !strings.Contains(out, "/home/agent/proj/sub") {
			t.Fatalf("the cd did not carry over: %q", out)
		}
		if out := c.sh("echo \"foo=$FOO\"; cd /home/agent"); !strings.Contains(out, "foo=\n") && strings.TrimSpace(out) != "foo=" {
			t.Fatalf("the environment persisted: %q", out)
		}
	})

	t.Run("shaping", func(t *testing.T) {
		out, meta := c.call(code.ToolShell, map[string]any{"command": "seq 1 40000"})
		logPath, _ := meta["log_path"].(string)
		if !strings.HasPrefix(out, "1\n2\n3\n") || !strings.HasSuffix(out, "39999\n40000") ||
			!strings.HasPrefix(logPath, "/home/agent/.runs/"+c.run.ID+"/") || !strings.Contains(out, logPath) || len(out) > 8192 {
			t.Fatalf("long output (%d bytes, log %q):\n%.400s\n…\n%s", len(out), logPath, out, out[max(0, len(out)-200):])
		}
		if full := c.sh("wc -l < " + logPath); strings.TrimSpace(full) != "40000" {
			t.Fatalf("the full log has %q lines", full)
		}
		out = c.sh(`printf '\033[1;31mred\033[0m plain\n'; printf 'progress 10%%\rprogress 50%%\rprogress 100%%\n'`)
		if out != "red plain\nprogress 100%" {
			t.Fatalf("ANSI and carriage returns: %q", out)
		}
	})

	t.Run("timeout stops the whole group", func(t *testing.T) {
		out, meta := c.call(code.ToolShell, map[string]any{"command": "sleep 300 & echo $! > /tmp/child; trap '' TERM; sleep 300", "timeout_seconds": 1})
		if !strings.HasSuffix(out, "exit_code: 124") || num(meta["exit_code"]) != 124 || meta["timed_out"] != true {
			t.Fatalf("%q %v", out, meta)
		}
		if alive := c.sh(`kill -0 "$(cat /tmp/child)" 2>/dev/null && echo alive || echo gone`); strings.TrimSpace(alive) != "gone" {
			t.Fatalf("a process survived the timeout: %q", alive)
		}
	})

	t.Run("background jobs", func(t *testing.T) {
		out, meta := c.call(code.ToolShell, map[string]any{"command": "for i in 1 2 3; do echo line$i; done; sleep 1; echo finished", "background": true})
		id, _ := meta["background_id"].(string)
		if id == "" || !strings.Contains(out, id) {
			t.Fatalf("%q %v", out, meta)
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			st, sm := c.call(code.ToolShellStatus, map[string]any{"id": id})
			if sm["state"] == "exited" {
				mustContain(t, "status", st, "line3", "finished")
				if num(sm["exit_code"]) != 0 {
					t.Errorf("exit code %v", sm["exit_code"])
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the job did not finish: %q %v", st, sm)
			}
			time.Sleep(300 * time.Millisecond)
		}
		_, lm := c.call(code.ToolShell, map[string]any{"command": "sleep 300", "background": true})
		long, _ := lm["background_id"].(string)
		list, _ := c.call(code.ToolShellStatus, map[string]any{})
		mustContain(t, "the job list", list, id, long)
		stopped, sm := c.call(code.ToolShellStatus, map[string]any{"id": long, "stop": true})
		if sm["state"] != "stopped" {
			t.Fatalf("stop: %q %v", stopped, sm)
		}
	})

	t.Run("repeated read", func(t *testing.T) {
		c.call(code.ToolFileWrite, map[string]any{"path": "notes/a.txt", "content": "one\ntwo\nthree\n"})
		first, fm := c.call(code.ToolFileRead, map[string]any{"path": "notes/a.txt"})
		firstSeq := c.seq
		mustContain(t, "first read", first, "lines 1–3 of 3", "two")
		if h, _ := fm["content_hash"].(string); len(h) != 64 {
			t.Fatalf("content_hash %v", fm["content_hash"])
		}
		again, am := c.call(code.ToolFileRead, map[string]any{"path": "/home/agent/notes/a.txt", "limit": 2})
		if want := fmt.Sprintf("unchanged since step %d; read that result.", firstSeq); !strings.Contains(again, want) || num(am["repeat_of"]) != firstSeq {
			t.Fatalf("second read: %q %v", again, am)
		}
		c.call(code.ToolFileEdit, map[string]any{"path": "notes/a.txt", "old_string": "two", "new_string": "2"})
		after, _ := c.call(code.ToolFileRead, map[string]any{"path": "notes/a.txt"})
		mustContain(t, "read after the edit", after, "2")
	})

	t.Run("edits are atomic and keep the mode", func(t *testing.T) {
		c.call(code.ToolFileWrite, map[string]any{"path": "bin/run.sh", "content": "#!/bin/sh\necho a\necho a\n"})
		c.sh("chmod 750 bin/run.sh")
		before := c.sh("stat -c '%i %a' bin/run.sh")
		if out, _ := c.call(code.ToolFileEdit, map[string]any{"path": "bin/run.sh", "old_string": "echo a", "new_string": "echo b"}); !strings.HasPrefix(out, "ERROR: ") {
			t.Fatalf("ambiguous edit: %q", out)
		}
		if out, _ := c.call(code.ToolFileEdit, map[string]any{"path": "bin/run.sh", "old_string": "echo z", "new_string": "echo b"}); !strings.HasPrefix(out, "ERROR: ") {
			t.Fatalf("missing string: %q", out)
		}
		if got := c.sh("cat bin/run.sh; stat -c '%i %a' bin/run.sh"); got != "#!/bin/sh\necho a\necho a\n"+before && !strings.HasSuffix(got, before) {
			t.Fatalf("a refused edit changed the file: %q (was %q)", got, before)
		}
		out, meta := c.call(code.ToolFileEdit, map[string]any{"path": "bin/run.sh", "old_string": "echo a", "new_string": "echo b\necho c", "replace_all": true})
		if out != "edited bin/run.sh (+4 −2)" || num(meta["lines_added"]) != 4 || num(meta["lines_removed"]) != 2 {
			t.Fatalf("replace_all: %q %v", out, meta)
		}
		after := strings.Fields(c.sh("stat -c '%i %a' bin/run.sh"))
		if after[1] != "750" || after[0] == strings.Fields(before)[0] {
			t.Fatalf("after the edit %v, before %q: the file was not replaced by a rename keeping its mode", after, before)
		}
		if left := c.sh("ls -A bin"); strings.TrimSpace(left) != "run.sh" {
			t.Fatalf("temporary files left: %q", left)
		}
		if out, _ := c.call(code.ToolFileWrite, map[string]any{"path": "deep/er/new.txt", "content": "a\nb"}); out != "wrote deep/er/new.txt (2 lines)" {
			t.Fatalf("write: %q", out)
		}
	})

	t.Run("confinement", func(t *testing.T) {
		c.sh("ln -sfn /etc etc-link; ln -sf /etc/passwd passwd-link; echo outside > /tmp/outside.txt; ln -sf /tmp/outside.txt out-link")
		for _, p := range []string{"/etc/passwd", "../../etc/passwd", "etc-link/passwd", "passwd-link"} {
			if out, _ := c.call(code.ToolFileRead, map[string]any{"path": p}); !strings.HasPrefix(out, "ERROR: ") || strings.Contains(out, "root:") {
				t.Errorf("file_read %s: %q", p, out)
			}
		}
		if out, _ := c.call(code.ToolFileWrite, map[string]any{"path": "out-link", "content": "changed"}); !strings.HasPrefix(out, "ERROR: ") {
			t.Errorf("file_write through a link out of /home/agent: %q", out)
		}
		if out, _ := c.call(code.ToolFileEdit, map[string]any{"path": "out-link", "old_string": "outside", "new_string": "changed"}); !strings.HasPrefix(out, "ERROR: ") {
			t.Errorf("file_edit through a link out of /home/agent: %q", out)
		}
		if got := c.sh("cat /tmp/outside.txt"); strings.TrimSpace(got) != "outside" {
			t.Errorf("the file outside changed: %q", got)
		}
	})

	t.Run("request over 64 KiB", func(t *testing.T) {
		content := strings.Repeat("print('a line long enough to make the request large')\n", 3000)
		out, meta := c.call(code.ToolFileWrite, map[string]any{"path": "big.py", "content": content})
		if out != "wrote big.py (3000 lines)" {
			t.Fatalf("%q %v", out, meta)
		}
		if got := c.sh("wc -c < big.py; ls -A /run/guilds/requests | wc -l"); got != fmt.Sprintf("%d\n0", len(content)) {
			t.Fatalf("big.py and the request folder: %q", got)
		}
	})

	t.Run("search", func(t *testing.T) {
		c.call(code.ToolFileWrite, map[string]any{"path": "repos/calc/calc.py", "content": "def add(a, b):\n    return a + b\n\n\ndef total(xs):\n    return sum(add(x, 0) for x in xs)\n"})
		c.call(code.ToolFileWrite, map[string]any{"path": "repos/calc/main.py", "content": "from calc import total\n\nprint(total([1, 2]))\n"})
		c.sh("cd /home/agent/repos/calc && git init -q && printf 'build/\\n' > .gitignore && mkdir -p build && echo 'def add(): pass' > build/gen.py; cd /home/agent")
		files, fm := c.call(code.ToolCodeSearch, map[string]any{"pattern": "add"})
		mustContain(t, "files mode", files, "calc.py")
		if strings.Contains(files, "build/") || num(fm["matches"]) < 2 {
			t.Errorf("files mode: %q %v", files, fm)
		}
		content, _ := c.call(code.ToolCodeSearch, map[string]any{"pattern": "add(", "fixed": true, "mode": "content", "context": 1})
		mustContain(t, "content mode", content, "calc.py:6:")
		match, mm := c.call(code.ToolCodeMatch, map[string]any{"pattern": "add($A, $B)", "lang": "python"})
		mustContain(t, "code_match", match, "calc.py:6:")
		if num(mm["matches"]) < 1 {
			t.Errorf("code_match meta %v", mm)
		}
		if out, _ := c.call(code.ToolCodeMatch, map[string]any{"pattern": "add(", "lang": "cobol"}); !strings.HasPrefix(out, "ERROR: ") {
			t.Errorf("unknown language: %q", out)
		}
	})

	t.Run("graph", func(t *testing.T) {
		c.call(code.ToolFileWrite, map[string]any{"path": "/home/agent/repos/shop/cart.py",
			"content": "def price(item):\n    return item['price']\n\n\ndef total(items):\n    return sum(price(i) for i in items)\n"})
		c.call(code.ToolFileWrite, map[string]any{"path": "/home/agent/repos/shop/app.py",
			"content": "from cart import total\n\n\ndef checkout(items):\n    return total(items)\n"})
		c.call(code.ToolFileWrite, map[string]any{"path": "/home/agent/repos/shop/README.txt", "content": "a shop\n"})
		m, mm := c.call(code.ToolCodeMap, map[string]any{"repo": "shop"})
		if strings.HasPrefix(m, "ERROR: ") || mm["repository"] != "shop" {
			t.Fatalf("code_map: %q %v", m, mm)
		}
		outline, _ := c.call(code.ToolCodeOutline, map[string]any{"path": "/home/agent/repos/shop/cart.py"})
		mustContain(t, "code_outline", outline, "price", "total")
		if out, _ := c.call(code.ToolCodeOutline, map[string]any{"path": "/home/agent/repos/shop/README.txt"}); strings.Contains(out, "a shop") {
			t.Errorf("code_outline of a file the graph does not parse: %q", out)
		}
		find, fm := c.call(code.ToolCodeFind, map[string]any{"question": "total", "in": "/home/agent/repos/shop"})
		mustContain(t, "code_find", find, "cart.py")
		if fm["hits"] == nil {
			t.Errorf("code_find meta %v", fm)
		}
		callers, cm := c.call(code.ToolCodeCallers, map[string]any{"symbol": "price", "in": "/home/agent/repos/shop", "depth": 2})
		mustContain(t, "code_callers", callers, "total")
		if cm["hits"] == nil || cm["repository"] != "shop" {
			t.Errorf("code_callers meta %v", cm)
		}
		// An edit is seen by the next query: the graph is refreshed against the working tree.
		c.call(code.ToolFileEdit, map[string]any{"path": "/home/agent/repos/shop/app.py", "old_string": "return total(items)", "new_string": "return price(items[0])"})
		callers, _ = c.call(code.ToolCodeCallers, map[string]any{"symbol": "price", "in": "/home/agent/repos/shop"})
		mustContain(t, "code_callers after an edit", callers, "checkout")
		if out, _ := c.call(code.ToolCodeMap, map[string]any{"repo": "nope"}); !strings.HasPrefix(out, "ERROR: ") {
			t.Errorf("unknown repository: %q", out)
		}
	})
}

// BenchmarkCodeToolVsBareExec puts a code tool call (shell `echo hi` through
// the native registry: request, helper, shell, shaping, response) beside a
// bare exec of the same command through the driver, in the same sandbox.
func BenchmarkCodeToolVsBareExec(b *testing.B) {
	c := newCodeRun(b)
	if out := c.sh("echo hi"); out != "hi" {
		b.Fatalf("warm-up: %q", out)
	}
	id := c.mgr.SandboxID(c.agent)
	ctx := context.Background()
	b.Run("code_tool", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			out := c.reg.Invoke(ctx, tools.Call{Name: code.ToolShell, Args: json.RawMessage(`{"command":"echo hi"}`),
				RunID: c.run.ID, AgentID: c.agent, Seq: 3, CallID: "bench"})
			if out != "hi" {
				b.Fatalf("%q", out)
			}
		}
	})
	b.Run("bare_exec", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := c.drv.Exec(ctx, id, sandbox.ExecRequest{Cmd: []string{"bash", "-c", "echo hi"}})
			if err != nil || string(res.Stdout) != "hi\n" {
				b.Fatalf("%q %v", res.Stdout, err)
			}
		}
	})
}
