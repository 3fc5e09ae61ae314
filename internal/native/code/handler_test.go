package code

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/codeproto"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/sandbox/helper"
)

// session is one run of one agent calling the code tools the way the tool
// activity does: through the registry, with the metadata recorded and the
// call stored at its seq.
type session struct {
	t     testing.TB
	reg   *tools.Registry
	db    *pgxpool.Pool
	run   runs.Run
	seq   int
	ws    sandbox.Workspace
	agent string
}

func newSession(t testing.TB, ws sandbox.Workspace, helper string) *session {
	t.Helper()
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
	r, err := runs.Create(ctx, db, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "direct", Budget: 100, Message: "code"})
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry()
	Register(reg, Deps{Workspace: ws, DB: db, Helper: helper})
	return &session{t: t, reg: reg, db: db, run: r, seq: 1, ws: ws, agent: agent}
}

// call runs one tool call and stores it; it returns the raw result and the
// metadata the call recorded.
func (s *session) call(tool, args string) (string, map[string]any) {
	s.t.Helper()
	s.seq += 2 // an assistant message, then the result
	ctx, recorded := tools.WithMetadata(context.Background())
	out := s.reg.Invoke(ctx, tools.Call{Name: tool, Args: json.RawMessage(args), RunID: s.run.ID, AgentID: s.agent,
		Seq: s.seq, CallID: fmt.Sprintf("call_%d", s.seq)})
	meta := recorded()
	raw, _ := json.Marshal(meta)
	outcome := runs.OutcomeOK
	if strings.HasPrefix(out, "ERROR: ") {
		outcome = runs.OutcomeError
	}
	now := time.Now()
	if _, _, err := runs.SaveToolCall(context.Background(), s.db, runs.ToolCall{RunID: s.run.ID, Seq: s.seq,
		CallID: fmt.Sprintf("call_%d", s.seq), Tool: tool, Arguments: args, Result: out, Outcome: outcome,
		StartedAt: now, FinishedAt: now, Metadata: raw}); err != nil {
		s.t.Fatal(err)
	}
	return out, meta
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

func TestShellOnTheLocalDriver(t *testing.T) {
	s := newSession(t, newLocalWorkspace(t), buildHelper(t))
	out, _ := s.call(ToolShell, `{"command":"echo hi; echo \"$GUILD_RUN_ID\""}`)
	if !strings.Contains(out, "hi") || !strings.Contains(out, s.run.ID) {
		t.Fatalf("shell: %q", out)
	}
	out, meta := s.call(ToolShell, `{"command":"mkdir -p proj && cd proj && exit 3"}`)
	if !strings.Contains(out, "exit_code: 3") || num(meta["exit_code"]) != 3 {
		t.Fatalf("exit 3: %q %v", out, meta)
	}
	out, meta = s.call(ToolShell, `{"command":"pwd"}`)
	if !strings.Contains(out, "/proj") || meta["cwd"] == nil {
		t.Fatalf("the cd did not carry over: %q %v", out, meta)
	}
}

// A second read of unchanged lines returns one line naming the step that
// returned them, from the stored metadata of the first; an edit changes the
// hash, so the next read returns content again.
func TestRepeatedReadOnTheLocalDriver(t *testing.T) {
	s := newSession(t, newLocalWorkspace(t), buildHelper(t))
	if out, _ := s.call(ToolFileWrite, `{"path":"app/main.py","content":"def main():\n    return 1\n"}`); !strings.HasPrefix(out, "wrote ") {
		t.Fatalf("write: %q", out)
	}
	first, meta := s.call(ToolFileRead, `{"path":"app/main.py"}`)
	firstSeq := s.seq
	if !strings.Contains(first, "return 1") || meta["content_hash"] == nil || num(meta[MetaBytes]) != len(first) {
		t.Fatalf("read: %q %v", first, meta)
	}
	again, meta := s.call(ToolFileRead, `{"path":"app/main.py"}`)
	if want := fmt.Sprintf("unchanged since step %d; read that result.", firstSeq); !strings.Contains(again, want) ||
		num(meta["repeat_of"]) != firstSeq {
		t.Fatalf("repeat: %q %v (want %q)", again, meta, want)
	}
	if out, _ := s.call(ToolFileEdit, `{"path":"app/main.py","old_string":"return 1","new_string":"return 2"}`); !strings.HasPrefix(out, "edited ") {
		t.Fatalf("edit: %q", out)
	}
	after, meta := s.call(ToolFileRead, `{"path":"app/main.py"}`)
	if !strings.Contains(after, "return 2") || meta["repeat_of"] != nil {
		t.Fatalf("read after edit: %q %v", after, meta)
	}
}

// A request whose encoding passes 64 KiB goes through a request file, which
// the helper deletes.
func TestLargeRequestOnTheLocalDriver(t *testing.T) {
	ws := newLocalWorkspace(t)
	s := newSession(t, ws, buildHelper(t))
	content := strings.Repeat("x = 'a fairly long line of python to fill the request'\n", 2000)
	args, _ := json.Marshal(map[string]string{"path": "big.py", "content": content})
	if enc, _ := helper.Encode(codeproto.Request{Tool: ToolFileWrite, Args: args}); len(enc) <= helper.MaxArgBytes {
		t.Fatalf("the request is only %d bytes encoded", len(enc))
	}
	if out, _ := s.call(ToolFileWrite, string(args)); out != "wrote big.py (2000 lines)" {
		t.Fatalf("write: %q", out)
	}
	dir, err := ws.hostPath(s.agent, helper.RequestDir)
	if err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("request files left behind: %v", left)
	}
	home, _ := ws.hostPath(s.agent, "/home/agent")
	if got, err := os.ReadFile(filepath.Join(home, "big.py")); err != nil || string(got) != content {
		t.Fatalf("big.py: %d bytes, %v", len(got), err)
	}
}

// A helper that cannot run is a failure of the call, not a result.
func TestHelperThatCannotRun(t *testing.T) {
	s := newSession(t, newLocalWorkspace(t), "/nonexistent/guilds-code")
	out, _ := s.call(ToolShell, `{"command":"echo hi"}`)
	if !strings.HasPrefix(out, "ERROR: the code helper failed (exit 127)") {
		t.Fatalf("got %q", out)
	}
}
