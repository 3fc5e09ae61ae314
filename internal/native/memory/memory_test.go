package memory_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/native/memory"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

func setup(t *testing.T) (*tools.Registry, func(string) string, string, func(string, ...any) int) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	var agent string
	err := db.QueryRow(ctx, `WITH o AS (INSERT INTO organisations (name, slug) VALUES ('A', 'a') RETURNING id),
		g AS (INSERT INTO guilds (organisation_id, name) SELECT id, 'g' FROM o RETURNING id)
		INSERT INTO agents (guild_id, name) SELECT id, 'alice' FROM g RETURNING id`).Scan(&agent)
	if err != nil {
		t.Fatal(err)
	}
	reg := tools.NewRegistry(tools.WithLogger(slog.New(slog.DiscardHandler)))
	memory.Register(reg, memory.Deps{DB: db})
	write := func(content string) string {
		b, _ := json.Marshal(map[string]string{"content": content})
		return reg.Invoke(ctx, tools.Call{Name: "memory_write", Args: b, AgentID: agent})
	}
	count := func(sql string, args ...any) int {
		var n int
		if err := db.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	t.Cleanup(func() {})
	_ = db
	return reg, write, agent, count
}

func TestWriteReplacesAndArchives(t *testing.T) {
	_, write, agent, count := setup(t)
	if out := write("first"); out != "memory saved (5 characters)" {
		t.Fatalf("write: %s", out)
	}
	if n := count(`SELECT count(*) FROM memory_revisions`); n != 0 {
		t.Fatalf("first write archived %d", n)
	}
	write("second")
	if n := count(`SELECT count(*) FROM memory_revisions WHERE content = 'first' AND agent_id = $1`, agent); n != 1 {
		t.Fatal("previous version not archived")
	}
	for i := range 60 {
		write(fmt.Sprintf("v%d", i))
	}
	if n := count(`SELECT count(*) FROM memory_revisions`); n != memory.MaxRevisions {
		t.Fatalf("kept %d revisions", n)
	}
	// The oldest were dropped; the newest archive is the version before the current one.
	if n := count(`SELECT count(*) FROM memory_revisions WHERE content IN ('first', 'second')`); n != 0 {
		t.Fatal("oldest revisions kept")
	}
	if n := count(`SELECT count(*) FROM memory_revisions WHERE id = (SELECT max(id) FROM memory_revisions) AND content = 'v58'`); n != 1 {
		t.Fatal("newest revision is not the previous version")
	}
	if n := count(`SELECT count(*) FROM memory WHERE content = 'v59'`); n != 1 {
		t.Fatal("memory not replaced")
	}
}

func TestWriteLimit(t *testing.T) {
	_, write, _, count := setup(t)
	write("keep me")
	exact := strings.Repeat("é", memory.MaxChars) // characters, not bytes
	if out := write(exact); strings.HasPrefix(out, "ERROR") {
		t.Fatalf("12000 characters refused: %s", out)
	}
	out := write(exact + "x")
	if !strings.HasPrefix(out, "ERROR: 422 memory is 12001 characters") {
		t.Fatalf("over the limit: %s", out)
	}
	if n := count(`SELECT count(*) FROM memory_revisions`); n != 1 {
		t.Fatalf("a refused write archived (%d revisions)", n)
	}
	if out := write(""); strings.HasPrefix(out, "ERROR") {
		t.Fatalf("clearing refused: %s", out)
	}
}

func TestLoadAndPrompt(t *testing.T) {
	_, write, agent, _ := setup(t)
	db := testdb.New(t) // an agent with no memory in another database
	if s, err := memory.Load(context.Background(), db, "00000000-0000-0000-0000-000000000000"); err != nil || s != "" {
		t.Fatalf("no memory: %q %v", s, err)
	}
	_ = agent
	write("likes tea")
	if got := memory.PromptSection("likes tea", true); !strings.Contains(got, "likes tea") || !strings.Contains(got, "memory_write") {
		t.Fatalf("offered: %s", got)
	}
	if got := memory.PromptSection("likes tea", false); !strings.Contains(got, "likes tea") || strings.Contains(got, "memory_write") {
		t.Fatalf("not offered: %s", got)
	}
	if got := memory.PromptSection("  ", false); got != "" {
		t.Fatalf("empty, not offered: %q", got)
	}
	if got := memory.PromptSection("", true); !strings.Contains(got, "(empty)") {
		t.Fatalf("empty, offered: %q", got)
	}
}
