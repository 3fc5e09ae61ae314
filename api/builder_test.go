package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
)

// coachModel is an OpenAI-compatible chat completions endpoint that plays
// scripted turns in order (each a list of tool calls; none ends with the
// text "Done.") and keeps what it was sent.
type coachModel struct {
	*httptest.Server
	key string

	mu       sync.Mutex
	turns    [][]scriptedCall
	requests []string
}

type scriptedCall struct {
	Name string
	Args any
}

func newCoachModel(t *testing.T, key string, turns ...[]scriptedCall) *coachModel {
	m := &coachModel{key: key, turns: turns}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var raw json.RawMessage
		if err := json.NewDecoder(r.Body).Decode(&raw); err != nil || r.Header.Get("Authorization") != "Bearer "+m.key {
			http.Error(w, `{"error":{"message":"refused"}}`, http.StatusUnauthorized)
			return
		}
		m.mu.Lock()
		m.requests = append(m.requests, string(raw))
		var turn []scriptedCall
		if len(m.turns) > 0 {
			turn, m.turns = m.turns[0], m.turns[1:]
		}
		m.mu.Unlock()
		msg := map[string]any{"role": "assistant", "content": "Done."}
		finish := "stop"
		if len(turn) > 0 {
			var calls []any
			for i, c := range turn {
				args, _ := json.Marshal(c.Args)
				calls = append(calls, map[string]any{"id": "call_" + c.Name + "_" + string(rune('a'+i)), "type": "function",
					"function": map[string]any{"name": c.Name, "arguments": string(args)}})
			}
			msg, finish = map[string]any{"role": "assistant", "content": "", "tool_calls": calls}, "tool_calls"
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"finish_reason": finish, "message": msg}}})
	}))
	t.Cleanup(m.Close)
	return m
}

// Received is every request the model was sent, joined.
func (m *coachModel) Received() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return strings.Join(m.requests, "\n")
}

// publishServer adds a published catalog server with published tools.
func publishServer(t *testing.T, e *apitest.Env, slug string, tools ...string) {
	t.Helper()
	ctx := context.Background()
	if _, err := e.DB.Exec(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config, published)
		VALUES ($1, $1, 'remote', 'http', 'https://'||$1||'.example/mcp', 'token', '{}', true)
		ON CONFLICT (slug) DO UPDATE SET published = true`, slug); err != nil {
		t.Fatal(err)
	}
	for i, name := range tools {
		if _, err := e.DB.Exec(ctx, `INSERT INTO mcp_catalog_tools (server_id, name, description, position)
			SELECT id, $2, 'The ' || $2 || ' tool', $3 FROM mcp_servers WHERE slug = $1 ON CONFLICT DO NOTHING`, slug, name, i); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBuilderAcceptIsAllOrNothing: Accept creates the guild, its agents,
// their prompts and the switches in one step; a draft naming an unpublished
// server, a server without published tools, or an agent refused half way
// leaves nothing behind (issue 34 item 9).
func TestBuilderAcceptIsAllOrNothing(t *testing.T) {
	e := apitest.New(t, apitest.Options{})
	org, _, _ := e.Hierarchy()
	op := e.Operator(org)
	publishServer(t, e, "ledger", "list_entries", "post_entry")
	if _, err := e.DB.Exec(context.Background(), `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config, published)
		VALUES ('bare', 'Bare', 'remote', 'http', 'https://bare.example/mcp', 'token', '{}', true)`); err != nil {
		t.Fatal(err)
	}
	guilds, agents, bindings := e.Count("guilds"), e.Count("agents"), e.Count("bindings")
	unchanged := func(what string) {
		t.Helper()
		if e.Count("guilds") != guilds || e.Count("agents") != agents || e.Count("bindings") != bindings {
			t.Fatalf("%s: rows were left behind", what)
		}
	}
	agent := func(name, prompt string, sw ...map[string]any) map[string]any {
		return map[string]any{"name": name, "prompt": prompt, "switches": sw}
	}
	draft := func(agents ...map[string]any) map[string]any {
		return map[string]any{"guild": map[string]any{"name": "Books", "description": "keeps the books"}, "agents": agents,
			"switches": []map[string]any{{"server": "ledger", "on": true}}}
	}
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"an unpublished server", draft(agent("Clerk", "p", map[string]any{"server": "nowhere", "on": true})), "agents.0.switches.0.server"},
		{"a server with no published tool", draft(agent("Clerk", "p", map[string]any{"server": "bare", "on": true})), "agents.0.switches.0.server"},
		{"a tool the server does not publish", draft(agent("Clerk", "p", map[string]any{"server": "ledger", "tool": "wire_money", "on": true})), "agents.0.switches.0.tool"},
		{"two agents of one name", draft(agent("Clerk", "p"), agent("clerk", "q")), "agents.1.name"},
		{"no agent", draft(), "agents"},
		// Refused by the agent's own rules after the guild and the first
		// agent were written: the transaction takes them back.
		{"an agent refused half way", draft(agent("Clerk", "p"), agent("Auditor", strings.Repeat("x", 100_001))), "agents.1.prompt"},
	} {
		r := e.Do(op, "POST", "/api/orgs/"+org+"/builder/accept", c.body)
		if r.Status != http.StatusUnprocessableEntity || !strings.Contains(string(r.Body), `"field":"`+c.field+`"`) {
			t.Fatalf("%s: %d %s, want 422 on %s", c.name, r.Status, r.Body, c.field)
		}
		unchanged(c.name)
	}

	r := e.Do(op, "POST", "/api/orgs/"+org+"/builder/accept", draft(
		agent("Clerk", "Post the day's entries.", map[string]any{"server": "ledger", "tool": "post_entry", "on": false}),
		agent("Auditor", "Read the entries and report.")))
	if r.Status != http.StatusCreated {
		t.Fatalf("accept: %d %s", r.Status, r.Body)
	}
	var made struct {
		Guild  struct{ ID, Name string }
		Agents []struct{ ID, Name, Prompt string }
	}
	r.JSON(&made)
	if made.Guild.Name != "Books" || len(made.Agents) != 2 || made.Agents[0].Prompt != "Post the day's entries." {
		t.Fatalf("created %+v", made)
	}
	var guildOn, clerkOff bool
	if err := e.DB.QueryRow(context.Background(), `SELECT
		EXISTS (SELECT 1 FROM bindings WHERE scope = 'guild' AND scope_id = $1 AND catalog_kind = 'mcp' AND enabled),
		EXISTS (SELECT 1 FROM bindings WHERE scope = 'agent' AND scope_id = $2 AND catalog_kind = 'mcp_tool' AND catalog_id = 'ledger_post_entry' AND NOT enabled)`,
		made.Guild.ID, made.Agents[0].ID).Scan(&guildOn, &clerkOff); err != nil {
		t.Fatal(err)
	}
	if !guildOn || !clerkOff {
		t.Fatalf("switches: guild ledger on %v, clerk's post_entry off %v", guildOn, clerkOff)
	}
	if n := e.Count("audit_events"); n == 0 {
		t.Fatal("the switches the builder wrote are not audited")
	}
}

// TestCoachDraftsWithTheScriptedModel: the coach reads the published
// servers and the organisation's logins, proposes, and a proposal naming an
// unpublished server is sent back to it to fix; nothing is created.
func TestCoachDraftsWithTheScriptedModel(t *testing.T) {
	model := newCoachModel(t, "sk-or-coach-0123456789",
		[]scriptedCall{{"list_published_servers", map[string]any{}}, {"list_logins", map[string]any{}}, {"search_notion", map[string]any{"query": "invoices"}}},
		[]scriptedCall{{"propose_guild", map[string]any{"guild": map[string]any{"name": "Books"},
			"agents": []any{map[string]any{"name": "Clerk", "prompt": "p", "switches": []any{map[string]any{"server": "nowhere", "on": true}}}}}}},
		[]scriptedCall{{"propose_guild", map[string]any{"guild": map[string]any{"name": "Books"}, "why": "one clerk is enough",
			"agents":   []any{map[string]any{"name": "Clerk", "prompt": "Post entries.", "switches": []any{map[string]any{"server": "ledger", "tool": "post_entry", "on": true}}}},
			"switches": []any{map[string]any{"server": "ledger", "on": true}}}}},
	)
	e := apitest.New(t, apitest.Options{Env: map[string]string{"OPENROUTER_API_KEY": model.key}, Tweak: coachAt(model.URL)})
	org, _, _ := e.Hierarchy()
	op := e.Operator(org)
	publishServer(t, e, "ledger", "list_entries", "post_entry")
	guilds := e.Count("guilds")

	if r := e.Do(op, "POST", "/api/orgs/"+org+"/builder/coach", map[string]any{"job": " "}); r.Status != 422 {
		t.Fatalf("an empty job: %d %s", r.Status, r.Body)
	}
	r := e.Do(op, "POST", "/api/orgs/"+org+"/builder/coach", map[string]any{"job": "Keep the books of the shop"})
	if r.Status != 200 {
		t.Fatalf("coach: %d %s", r.Status, r.Body)
	}
	var adv struct {
		Proposal struct {
			Guild  struct{ Name string }
			Agents []struct{ Name string }
			Why    string
		}
		Steps []struct{ Tool, Result string }
	}
	r.JSON(&adv)
	if adv.Proposal.Guild.Name != "Books" || len(adv.Proposal.Agents) != 1 || adv.Proposal.Why != "one clerk is enough" || len(adv.Steps) != 3 {
		t.Fatalf("advice %s", r.Body)
	}
	if !strings.Contains(adv.Steps[2].Result, "no connected Notion login") {
		t.Fatalf("search without a Notion login said %q", adv.Steps[2].Result)
	}
	sent := model.Received()
	for _, want := range []string{"Keep the books of the shop", `\"slug\":\"ledger\"`, "post_entry", `\"nowhere\" is not a published server`} {
		if !strings.Contains(sent, want) {
			t.Errorf("the model was not sent %s", want)
		}
	}
	if e.Count("guilds") != guilds {
		t.Fatal("the coach created a guild")
	}
	// The model ends without proposing: said in words.
	r = e.Do(op, "POST", "/api/orgs/"+org+"/builder/coach", map[string]any{"job": "again"})
	if r.Status != 422 || r.ErrorCode() != "no_proposal" {
		t.Fatalf("no proposal: %d %s", r.Status, r.Body)
	}
}

// coachAt points the API's model resolver at a scripted model.
func coachAt(url string) func(*api.Deps) {
	return func(d *api.Deps) {
		d.Models = &models.Resolver{Integrations: d.Integrations, BaseURLs: map[string]string{"openrouter": url}}
	}
}

// TestCoachNeverSeesTheNotionCredential: the coach's search of the
// organisation's Notion login takes a run's call path, so a service that
// echoes the login's key in its answer reaches the model redacted.
func TestCoachNeverSeesTheNotionCredential(t *testing.T) {
	const key = "ntn-secret-key-0123456789"
	model := newCoachModel(t, "sk-or-coach-0123456789",
		[]scriptedCall{{"search_notion", map[string]any{"query": "orders"}}},
		[]scriptedCall{{"propose_guild", map[string]any{"guild": map[string]any{"name": "Desk"},
			"agents": []any{map[string]any{"name": "Clerk", "prompt": "Answer orders."}}}}})
	me := newMCPEnvDeps(t, false, nil, nil, func(d *api.Deps) {
		d.Models = &models.Resolver{BaseURLs: map[string]string{"openrouter": model.URL},
			Integrations: integrations.New(func(k string) string {
				if k == "OPENROUTER_API_KEY" {
					return model.key
				}
				return ""
			})}
	})
	notion := server.NewMCPServer("notion", "1.0.0", server.WithToolCapabilities(false))
	notion.AddTool(mcp.NewTool("notion-search", mcp.WithString("query", mcp.Required())), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("Orders database; debug: authorised with " + key), nil
	})
	h := server.NewStreamableHTTPServer(notion, server.WithStateful(true))
	url := newHTTPServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+key {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	addServer(t, me.DB, "notion", url, "token", `{"header":"Authorization","scheme":"Bearer"}`)
	org, _, _ := me.Hierarchy()
	if r := me.Admin("POST", "/api/mcp/connect", map[string]any{"slug": "notion", "owner_scope": "organisation", "owner_id": org, "key": key}); r.Status != 200 {
		t.Fatalf("connect Notion: %d %s", r.Status, r.Body)
	}
	r := me.Admin("POST", "/api/orgs/"+org+"/builder/coach", map[string]any{"job": "Answer the shop's orders"})
	if r.Status != 200 {
		t.Fatalf("coach: %d %s", r.Status, r.Body)
	}
	sent := model.Received()
	if !strings.Contains(sent, "Orders database") {
		t.Fatal("the search's result did not reach the coach")
	}
	if strings.Contains(sent, key) || strings.Contains(string(r.Body), key) {
		t.Fatal("the Notion login's key reached the coach's model or the reply")
	}
}
