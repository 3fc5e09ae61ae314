package run_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/native/memory"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
)

// chatRecorder is an OpenAI-compatible /chat/completions endpoint that keeps
// the system message and tool names of every request.
type chatRecorder struct {
	mu      sync.Mutex
	systems []string
	tools   [][]string
}

func (c *chatRecorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Messages []struct{ Role, Content string } `json:"messages"`
		Tools    []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	_ = json.Unmarshal(body, &req)
	system, names := "", []string{}
	for _, m := range req.Messages {
		if m.Role == "system" {
			system = m.Content
		}
	}
	for _, t := range req.Tools {
		names = append(names, t.Function.Name)
	}
	c.mu.Lock()
	c.systems, c.tools = append(c.systems, system), append(c.tools, names)
	c.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}]}`)
}

// The model turn's system prompt holds the agent's memory, and names
// memory_write only when the turn offers it.
func TestModelPromptCarriesMemory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testdb.New(t)
	rec := &chatRecorder{}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	res := &models.Resolver{Integrations: integrations.New(func(k string) string {
		if k == "OPENROUTER_API_KEY" {
			return "or-test-key"
		}
		return ""
	}), BaseURLs: map[string]string{models.OpenRouter: srv.URL}}
	a := runact.New(runact.Deps{DB: db, Models: res, Log: slog.New(slog.DiscardHandler)})

	var org, guild, agent string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, org).Scan(&guild); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, model, prompt) VALUES ($1, 'scout', 'openrouter/test-model', 'You are a test agent.') RETURNING id`,
		guild).Scan(&agent); err != nil {
		t.Fatal(err)
	}
	memTool := runs.OfferedTool{Name: memory.ToolWrite, Kind: "native", Description: "replace memory",
		Schema: json.RawMessage(`{"type":"object"}`), ShapedSchema: json.RawMessage(`{"type":"object"}`), Class: "default"}
	other := runs.OfferedTool{Name: "note_find", Kind: "native", Description: "find notes",
		Schema: json.RawMessage(`{"type":"object"}`), ShapedSchema: json.RawMessage(`{"type":"object"}`), Class: "default"}
	turn := func(offered []runs.OfferedTool, final bool) (string, []string) {
		t.Helper()
		r, err := runs.Create(ctx, db, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "direct",
			Model: "openrouter/test-model", Budget: 5, Message: "hello"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := runs.SaveSnapshot(ctx, db, runs.Snapshot{RunID: r.ID, Tools: offered}); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Model(ctx, runact.ModelInput{RunID: r.ID, Seq: 2, Final: final}); err != nil {
			t.Fatal(err)
		}
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return rec.systems[len(rec.systems)-1], rec.tools[len(rec.tools)-1]
	}

	// No memory and no tool: the prompt is the agent's own.
	if sys, _ := turn([]runs.OfferedTool{other}, false); sys != "You are a test agent." {
		t.Fatalf("no memory, not offered: %q", sys)
	}
	// No memory yet, tool offered: the model learns it can keep one.
	if sys, _ := turn([]runs.OfferedTool{other, memTool}, false); !strings.Contains(sys, "(empty)") || !strings.Contains(sys, memory.ToolWrite) {
		t.Fatalf("empty memory, offered: %q", sys)
	}

	if _, err := memory.Write(ctx, db, agent, "The operator prefers tea."); err != nil {
		t.Fatal(err)
	}
	sys, names := turn([]runs.OfferedTool{other, memTool}, false)
	if !strings.HasPrefix(sys, "You are a test agent.\n\n") || !strings.Contains(sys, "The operator prefers tea.") ||
		!strings.Contains(sys, memory.ToolWrite) || strings.Join(names, ",") != "note_find,memory_write" {
		t.Fatalf("offered: %q %v", sys, names)
	}
	// Binding off (the snapshot has no memory_write): the memory shows, the tool is never named.
	sys, names = turn([]runs.OfferedTool{other}, false)
	if !strings.Contains(sys, "The operator prefers tea.") || strings.Contains(sys, memory.ToolWrite) || strings.Join(names, ",") != "note_find" {
		t.Fatalf("not offered: %q %v", sys, names)
	}
	// The final turn offers no tools, so it does not name memory_write either.
	sys, names = turn([]runs.OfferedTool{other, memTool}, true)
	if !strings.Contains(sys, "The operator prefers tea.") || strings.Contains(sys, memory.ToolWrite) || len(names) != 0 {
		t.Fatalf("final turn: %q %v", sys, names)
	}
}
