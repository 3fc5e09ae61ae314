package notes_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/native/memory"
	"github.com/guilds/guilds/internal/native/notes"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

type env struct {
	t                           *testing.T
	db                          *pgxpool.Pool
	reg                         *tools.Registry
	org, guild, alice, bob, zed string // alice and bob share a guild; zed is in another guild
	reach                       notes.Reach
}

func newEnv(t *testing.T) *env {
	t.Helper()
	t.Parallel()
	db := testdb.New(t)
	e := &env{t: t, db: db, reg: tools.NewRegistry(tools.WithLogger(slog.New(slog.DiscardHandler))), reach: notes.DefaultReach}
	notes.Register(e.reg, notes.Deps{DB: db, Reach: func(context.Context, store.DB, string) (notes.Reach, error) { return e.reach, nil }})
	ctx := context.Background()
	q := func(sql string, args ...any) string {
		var id string
		if err := db.QueryRow(ctx, sql, args...).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	e.org = q(`INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`)
	e.guild = q(`INSERT INTO guilds (organisation_id, name) VALUES ($1, 'sales') RETURNING id`, e.org)
	g2 := q(`INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, e.org)
	e.alice = q(`INSERT INTO agents (guild_id, name) VALUES ($1, 'alice') RETURNING id`, e.guild)
	e.bob = q(`INSERT INTO agents (guild_id, name) VALUES ($1, 'bob') RETURNING id`, e.guild)
	e.zed = q(`INSERT INTO agents (guild_id, name) VALUES ($1, 'zed') RETURNING id`, g2)
	return e
}

func (e *env) call(agent, tool string, args any) string {
	b, _ := json.Marshal(args)
	return e.reg.Invoke(context.Background(), tools.Call{Name: tool, Args: b, AgentID: agent})
}

func (e *env) ok(agent, tool string, args any) string {
	e.t.Helper()
	out := e.call(agent, tool, args)
	if strings.HasPrefix(out, "ERROR") {
		e.t.Fatalf("%s: %s", tool, out)
	}
	return out
}

func (e *env) fails(agent, tool string, args any, want string) {
	e.t.Helper()
	out := e.call(agent, tool, args)
	if !strings.HasPrefix(out, "ERROR: ") || !strings.Contains(out, want) {
		e.t.Fatalf("%s %v: want ERROR with %q, got %s", tool, args, want, out)
	}
}

func (e *env) paths(agent string, args map[string]any) []string {
	e.t.Helper()
	var res struct {
		Notes []struct{ Path, Snippet string }
	}
	if err := json.Unmarshal([]byte(e.ok(agent, "note_find", args)), &res); err != nil {
		e.t.Fatal(err)
	}
	var out []string
	for _, n := range res.Notes {
		out = append(out, n.Path)
	}
	return out
}

func TestLevels(t *testing.T) {
	e := newEnv(t)
	if out := e.ok(e.alice, "note_write", map[string]any{"level": "agent", "key": "todo.md", "content": "buy milk"}); out != "created agent/todo.md (8 bytes)" {
		t.Fatalf("write: %s", out)
	}
	e.ok(e.alice, "note_write", map[string]any{"level": "guild", "key": "plan.md", "content": "# Plan\nship it"})
	if out := e.ok(e.alice, "note_write", map[string]any{"level": "agent", "key": "todo.md", "content": "buy oat milk"}); !strings.HasPrefix(out, "replaced") {
		t.Fatalf("rewrite: %s", out)
	}
	if got := e.ok(e.alice, "note_get", map[string]any{"path": "agent/todo.md"}); got != "buy oat milk" {
		t.Fatalf("get: %s", got)
	}
	// Agent notes are private; guild notes are shared within the guild only.
	e.fails(e.bob, "note_get", map[string]any{"path": "agent/todo.md"}, "404 note agent/todo.md not found")
	if got := e.ok(e.bob, "note_get", map[string]any{"path": "guild/plan.md"}); !strings.Contains(got, "ship it") {
		t.Fatalf("bob guild note: %s", got)
	}
	e.fails(e.zed, "note_get", map[string]any{"path": "guild/plan.md"}, "404")
	// Organisation notes: readable by default, not writable.
	e.fails(e.alice, "note_write", map[string]any{"level": "org", "key": "handbook.md", "content": "x"}, "403 this agent is not granted writing organisation notes")
	e.reach.WriteOrg = true
	e.ok(e.alice, "note_write", map[string]any{"level": "org", "key": "handbook.md", "content": "be kind"})
	e.reach.WriteOrg = false
	if got := e.ok(e.zed, "note_get", map[string]any{"path": "org/handbook.md"}); got != "be kind" {
		t.Fatalf("zed org note: %s", got)
	}
	e.fails(e.zed, "note_delete", map[string]any{"path": "org/handbook.md"}, "403")

	if got := strings.Join(e.paths(e.alice, map[string]any{}), ","); got != "org/handbook.md,agent/todo.md,guild/plan.md" {
		t.Fatalf("find all: %s", got)
	}
	if got := strings.Join(e.paths(e.alice, map[string]any{"level": "guild"}), ","); got != "guild/plan.md" {
		t.Fatalf("find guild: %s", got)
	}
	if got := strings.Join(e.paths(e.alice, map[string]any{"query": "OAT milk"}), ","); got != "agent/todo.md" {
		t.Fatalf("find words: %s", got)
	}
	if got := e.paths(e.alice, map[string]any{"query": "100%"}); len(got) != 0 {
		t.Fatalf("wildcards are literal: %v", got)
	}
	// Reach withdrawn: guild and org notes disappear from find and get.
	e.reach = notes.Reach{}
	if got := strings.Join(e.paths(e.alice, map[string]any{}), ","); got != "agent/todo.md" {
		t.Fatalf("find without reach: %s", got)
	}
	e.fails(e.alice, "note_find", map[string]any{"level": "org"}, "403 this agent is not granted reading organisation notes")
	e.fails(e.alice, "note_get", map[string]any{"path": "guild/plan.md"}, "403")
	e.fails(e.alice, "note_write", map[string]any{"level": "guild", "key": "plan.md", "content": "x"}, "403")
	e.reach = notes.DefaultReach

	e.ok(e.alice, "note_delete", map[string]any{"path": "agent/todo.md"})
	e.fails(e.alice, "note_delete", map[string]any{"path": "agent/todo.md"}, "404")
	e.fails(e.alice, "note_get", map[string]any{"path": "agent/todo.md"}, "404")
}

func TestKeysAndLimits(t *testing.T) {
	e := newEnv(t)
	for key, want := range map[string]string{
		"a/b.md":    "no folders",
		"..md":      `may not contain ".."`,
		"../x.md":   "no folders",
		"notes.txt": "ending in .md",
		".md":       "ending in .md",
		"":          "key is required",
		" x.md":     "spaces",
	} {
		e.fails(e.alice, "note_write", map[string]any{"level": "agent", "key": key, "content": "x"}, want)
	}
	e.fails(e.alice, "note_write", map[string]any{"level": "agent", "key": "big.md", "content": strings.Repeat("x", notes.MaxContent+1)}, "422 note content")
	e.fails(e.alice, "note_get", map[string]any{"path": "todo.md"}, "path \"todo.md\" must be")
	e.fails(e.alice, "note_get", map[string]any{"path": "memory/todo.md"}, "must be agent/")
	var n int
	if err := e.db.QueryRow(context.Background(), `SELECT count(*) FROM artifacts`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("rejected writes stored %d artifacts (%v)", n, err)
	}
}

// The memory and its archive live outside the artifact store: no note tool reaches them.
func TestMemoryNotReachable(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, c := range []string{"secret plan one", "secret plan two"} {
		if _, err := memory.Write(ctx, e.db, e.alice, c); err != nil {
			t.Fatal(err)
		}
	}
	if got := e.paths(e.alice, map[string]any{"query": "secret"}); len(got) != 0 {
		t.Fatalf("note_find reached memory: %v", got)
	}
	for _, p := range []string{"agent/memory.md", "agent/MEMORY.md", "agent/memory_revisions.md"} {
		e.fails(e.alice, "note_get", map[string]any{"path": p}, "404")
	}
}

func TestFindSaysWhenItCutTheList(t *testing.T) {
	e := newEnv(t)
	for i := 0; i < 101; i++ {
		e.ok(e.alice, "note_write", map[string]any{"level": "agent", "key": fmt.Sprintf("n%03d.md", i), "content": "x"})
	}
	var res struct {
		Notes     []struct{ Path string }
		Truncated string
	}
	if err := json.Unmarshal([]byte(e.ok(e.alice, "note_find", map[string]any{"level": "agent"})), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 100 || !strings.Contains(res.Truncated, "first 100") {
		t.Fatalf("%d notes, truncated %q", len(res.Notes), res.Truncated)
	}
	e.ok(e.alice, "note_delete", map[string]any{"path": "agent/n000.md"})
	res.Truncated = ""
	if err := json.Unmarshal([]byte(e.ok(e.alice, "note_find", map[string]any{"level": "agent"})), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Notes) != 100 || res.Truncated != "" {
		t.Fatalf("exactly 100: %d notes, truncated %q", len(res.Notes), res.Truncated)
	}
}
