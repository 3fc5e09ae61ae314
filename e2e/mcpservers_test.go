package e2e

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/guilds/guilds/internal/tools"
)

// publishedServer is one catalog row of the suite: what an instance admin
// adds, how an operator makes it usable, and how the reference client
// reaches the same server.
type publishedServer struct {
	slug   string
	row    map[string]any    // POST /api/admin/mcp/servers
	values map[string]string // Connect's values; nil: the server needs no login and is turned On
	ref    func(t *testing.T) *client.Client
}

// TestPublishedMCPServers adds published MCP servers, installed from the npm
// registry at the versions e2e/mcpservers pins, to the deployed platform as a
// user would: through the catalog API, then turned On (those that need no
// login) or connected with values (memory: its file; Notion: a token). Each
// listing must be what the reference client lists, every schema offered to
// the model must be shaped, and a scripted run calls a tool of each: read a
// file, write one, create and read a graph entity, think, echo over HTTP,
// an image, navigate and snapshot a local page, and a Notion call with no
// network, which must fail cleanly. Notion's token never reaches the model,
// the transcript, the logs or the history.
func TestPublishedMCPServers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform and seven published MCP servers as processes")
	}
	s := needSuite(t)
	chromium, err := exec.LookPath("chromium")
	if err != nil && os.Getenv("CI") == "" {
		t.Skip("chromium is not installed: Playwright's server drives it")
	} else if err != nil {
		t.Fatal("chromium is not installed: Playwright's server drives it")
	}

	files, drafts, memDir := sharedDir(t, "files"), sharedDir(t, "drafts"), sharedDir(t, "memory")
	if err := os.WriteFile(filepath.Join(files, "tides.txt"), []byte("High tide on Tuesday at 06:12.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	memFile := filepath.Join(memDir, "graph.jsonl")
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<!doctype html><title>Harbour</title><h1>Harbour timetable</h1><button>Book a berth</button>`)
	}))
	t.Cleanup(page.Close)

	evPort, pwPort := freePort(t), freePort(t)
	evLogs := startServerProcess(t, evPort, []string{"PORT=" + strconv.Itoa(evPort)},
		s.node, s.bin("@modelcontextprotocol/server-everything", "dist/index.js"), "streamableHttp")
	pwLogs := startServerProcess(t, pwPort, nil, s.node, s.bin("@playwright/mcp", "cli.js"),
		"--headless", "--browser", "chromium", "--executable-path", chromium, "--no-sandbox", "--isolated",
		"--host", "127.0.0.1", "--port", strconv.Itoa(pwPort), "--allowed-hosts", "127.0.0.1:"+strconv.Itoa(pwPort), "--output-dir", sharedDir(t, "playwright"))
	evURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", evPort)
	pwURL := fmt.Sprintf("http://127.0.0.1:%d/mcp", pwPort)

	// Notion's API is out of reach: its base is a loopback port nobody listens on.
	notionToken := "ntn_" + randomHex(24)
	noNetwork := fmt.Sprintf("http://127.0.0.1:%d", freePort(t))

	servers := publishedServers(s, files, drafts, evURL, pwURL)
	servers = append(servers,
		publishedServer{slug: "memory", row: stdioRow("memory", s.node, s.bin("@modelcontextprotocol/server-memory", "dist/index.js"),
			[]map[string]any{{"name": "memory_file", "env": "MEMORY_FILE_PATH", "secret": false}}),
			values: map[string]string{"memory_file": memFile},
			ref: stdioRef(s.node, []string{"MEMORY_FILE_PATH=" + filepath.Join(memDir, "reference.jsonl")},
				s.bin("@modelcontextprotocol/server-memory", "dist/index.js"))},
		publishedServer{slug: "notionlocal", row: stdioRow("notionlocal", s.node, s.bin("@notionhq/notion-mcp-server", "bin/cli.mjs"),
			[]map[string]any{{"name": "token", "env": "NOTION_TOKEN"}, {"name": "api_base", "env": "BASE_URL", "secret": false}}),
			values: map[string]string{"token": notionToken, "api_base": noNetwork},
			ref: stdioRef(s.node, []string{"NOTION_TOKEN=" + notionToken, "BASE_URL=" + noNetwork},
				s.bin("@notionhq/notion-mcp-server", "bin/cli.mjs"))},
	)

	model := newScriptedModel(t, boxModelKey,
		[]toolCall{{"files_read_text_file", map[string]any{"path": filepath.Join(files, "tides.txt")}},
			{"drafts_write_file", map[string]any{"path": filepath.Join(drafts, "berth.txt"), "content": "Berth 4 booked for Tuesday."}}},
		[]toolCall{{"memory_create_entities", map[string]any{"entities": []any{map[string]any{"name": "Harbour master",
			"entityType": "person", "observations": []any{"keeps the tide table"}}}}}},
		[]toolCall{{"memory_open_nodes", map[string]any{"names": []any{"Harbour master"}}},
			{"thinking_sequentialthinking", map[string]any{"thought": "Tuesday's tide is early.", "nextThoughtNeeded": false,
				"thoughtNumber": 1, "totalThoughts": 1}}},
		[]toolCall{{"everything_get-tiny-image", map[string]any{}},
			{"everythinghttp_echo", map[string]any{"message": "over Streamable HTTP"}}},
		[]toolCall{{"browser_browser_navigate", map[string]any{"url": page.URL}}},
		[]toolCall{{"browser_browser_snapshot", map[string]any{}}},
		[]toolCall{{"notionlocal_API-get-self", map[string]any{}}},
		nil)
	d := deploy(t, map[string]string{"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL})
	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Harbour"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Berths"})["id"].(string)
	agent := d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Clerk"})["id"].(string)

	for _, srv := range servers {
		d.must(201, "POST", "/api/admin/mcp/servers", srv.row)
		start := time.Now()
		connID := makeUsable(t, d, srv, org)
		t.Logf("%s: On to first listing in %v", srv.slug, time.Since(start).Round(time.Millisecond))
		checkListing(t, d, srv, connID)
	}

	run := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Book a berth for Tuesday's tide."})
	runID := run["id"].(string)
	transcript := d.waitRun(runID)
	checkOfferedSchemas(t, model.Received())

	checkStampedResults(t, transcript, map[string]string{
		"files_read_text_file":        "High tide on Tuesday at 06:12.",
		"drafts_write_file":           "Successfully wrote to " + filepath.Join(drafts, "berth.txt"),
		"memory_create_entities":      "keeps the tide table",
		"memory_open_nodes":           `"name":"Harbour master"`, // the text copy of structuredContent, made compact (ADR 0621)
		"thinking_sequentialthinking": `"thoughtNumber":1`,
		"everything_get-tiny-image":   "[image: image/png, 3.9 KiB; kept as run image ",
		"everythinghttp_echo":         "Echo: over Streamable HTTP",
		"browser_browser_navigate":    "Page Title: Harbour",
		"browser_browser_snapshot":    `button "Book a berth"`,
		// No network: the call is a tool error the model reads, the run goes on.
		"notionlocal_API-get-self": "ERROR: internal error: connect ECONNREFUSED",
	})
	if raw, err := os.ReadFile(filepath.Join(drafts, "berth.txt")); err != nil || string(raw) != "Berth 4 booked for Tuesday." {
		t.Errorf("the written file: %q, %v", raw, err)
	}
	if raw, err := os.ReadFile(memFile); err != nil || !strings.Contains(string(raw), "Harbour master") {
		t.Errorf("the memory graph on disk: %q, %v", raw, err)
	}
	if !strings.Contains(model.Received(), `"image_url"`) {
		t.Error("the model was not given the image")
	}
	if strings.Contains(transcript, "iVBORw0KGgo") || strings.Contains(model.Received(), `"text":"iVBORw0KGgo`) {
		t.Error("the image reached the transcript or the model as base64 text")
	}

	secrets := append([]string{notionToken, boxModelKey}, d.secrets...)
	places := map[string]string{
		"the transcript":          transcript,
		"what the model received": model.Received(),
		"the run's history":       d.history("run-" + runID),
		"the logs":                d.Logs(),
	}
	for place, text := range places {
		for _, sec := range secrets {
			if sec != "" && strings.Contains(text, sec) {
				t.Errorf("%s holds a credential (%.8s…)", place, sec)
			}
		}
	}
	if t.Failed() {
		t.Logf("transcript:\n%s\nservers' output:\n%s\n%s\nplatform:\n%s", transcript, evLogs, pwLogs, d.Logs())
	}
}

// publishedServers are the rows that need no login: the filesystem server
// twice (one folder each), sequential thinking, the reference server over
// stdio and over Streamable HTTP, and Playwright over Streamable HTTP.
func publishedServers(s suite, files, drafts, evURL, pwURL string) []publishedServer {
	fsJS := s.bin("@modelcontextprotocol/server-filesystem", "dist/index.js")
	evJS := s.bin("@modelcontextprotocol/server-everything", "dist/index.js")
	thinkJS := s.bin("@modelcontextprotocol/server-sequential-thinking", "dist/index.js")
	return []publishedServer{
		{slug: "files", row: stdioRow("files", s.node, fsJS, nil, files), ref: stdioRef(s.node, nil, fsJS, files)},
		{slug: "drafts", row: stdioRow("drafts", s.node, fsJS, nil, drafts), ref: stdioRef(s.node, nil, fsJS, drafts)},
		{slug: "thinking", row: stdioRow("thinking", s.node, thinkJS, nil), ref: stdioRef(s.node, nil, thinkJS)},
		{slug: "everything", row: stdioRow("everything", s.node, evJS, nil), ref: stdioRef(s.node, nil, evJS)},
		{slug: "everythinghttp", row: httpRow("everythinghttp", evURL), ref: httpRef(evURL)},
		{slug: "browser", row: httpRow("browser", pwURL), ref: httpRef(pwURL)},
	}
}

func stdioRow(slug, node, js string, fields []map[string]any, args ...string) map[string]any {
	cfg := map[string]any{"command": node, "args": append([]string{js}, args...)}
	if fields != nil {
		cfg["provider"] = "config"
		cfg["fields"] = fields
	}
	return map[string]any{"slug": slug, "name": slug, "transport": "stdio", "auth": "none", "published": true, "config": cfg}
}

func httpRow(slug, url string) map[string]any {
	return map[string]any{"slug": slug, "name": slug, "transport": "http", "auth": "none", "published": true, "url": url}
}

func stdioRef(node string, env []string, args ...string) func(*testing.T) *client.Client {
	return func(t *testing.T) *client.Client {
		c, err := client.NewStdioMCPClient(node, env, args...)
		if err != nil {
			t.Fatalf("reference client: %v", err)
		}
		return c
	}
}

func httpRef(url string) func(*testing.T) *client.Client {
	return func(t *testing.T) *client.Client {
		c, err := client.NewStreamableHttpClient(url)
		if err != nil {
			t.Fatalf("reference client: %v", err)
		}
		return c
	}
}

// makeUsable turns a no-login server On at the organisation, or connects a
// configured one there with its values, and returns the login's id. Either
// lists the server's tools before it answers.
func makeUsable(t *testing.T, d *deployment, srv publishedServer, org string) string {
	t.Helper()
	if srv.values == nil {
		r := d.must(200, "PUT", "/api/bindings", map[string]any{"scope": "organisation", "scope_id": org,
			"catalog_kind": "mcp", "catalog_id": srv.slug, "enabled": true})
		id, _ := r["connection_id"].(string)
		if id == "" {
			t.Fatalf("%s: turning it on made no login: %v", srv.slug, r)
		}
		return id
	}
	r := d.must(200, "POST", "/api/mcp/connect", map[string]any{"slug": srv.slug, "owner_scope": "organisation",
		"owner_id": org, "values": srv.values})
	conn, _ := r["connection"].(map[string]any)
	if conn["status"] != "connected" {
		t.Fatalf("%s: connect: %v", srv.slug, r)
	}
	return conn["id"].(string)
}

// checkListing compares the login's listing with the reference client's:
// the same tools, descriptions and argument names.
func checkListing(t *testing.T, d *deployment, srv publishedServer, connID string) {
	t.Helper()
	r := d.Call("GET", "/api/mcp/connections/"+connID+"/tools", nil)
	var listed []struct {
		Name        string          `json:"name"`
		RemoteName  string          `json:"remote_name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}
	if r.Status != 200 || json.Unmarshal(r.Body, &listed) != nil {
		t.Fatalf("%s: listing: %d %s", srv.slug, r.Status, r.Body)
	}
	got := map[string]refTool{}
	for _, tl := range listed {
		got[tl.RemoteName] = refToolOf(tl.Description, tl.InputSchema)
	}
	want := referenceListing(t, srv.ref(t))
	if len(want) == 0 {
		t.Fatalf("%s: the reference client lists no tool", srv.slug)
	}
	for name, w := range want {
		if g, ok := got[name]; !ok {
			t.Errorf("%s: the platform did not list %q", srv.slug, name)
		} else if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: %q listed as %+v, the reference lists %+v", srv.slug, name, g, w)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s: the platform lists %q, the reference does not", srv.slug, name)
		}
	}
	t.Logf("%s: %d tools, as the reference lists them", srv.slug, len(want))
}

// checkOfferedSchemas checks that every tool schema the model was offered
// obeys the shaping rules: shaping it again changes nothing.
func checkOfferedSchemas(t *testing.T, received string) {
	t.Helper()
	first, _, _ := strings.Cut(received, "\n")
	var req struct {
		Tools []struct {
			Function struct {
				Name       string          `json:"name"`
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(first), &req); err != nil || len(req.Tools) == 0 {
		t.Fatalf("the model's first request offers no tools (%v)", err)
	}
	prefixes := map[string]int{}
	for _, tl := range req.Tools {
		name, params := tl.Function.Name, tl.Function.Parameters
		prefix, _, _ := strings.Cut(name, "_")
		prefixes[prefix]++
		again, _, err := tools.Shape(params)
		if err != nil {
			t.Errorf("offered schema of %s does not shape: %v", name, err)
			continue
		}
		var a, b any
		_ = json.Unmarshal(params, &a)
		_ = json.Unmarshal(again, &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("offered schema of %s is not shaped:\n%s\nshaped:\n%s", name, params, again)
		}
	}
	for _, slug := range []string{"files", "drafts", "memory", "thinking", "everything", "everythinghttp", "browser", "notionlocal"} {
		if prefixes[slug] == 0 {
			t.Errorf("the run was offered no tool of %s", slug)
		}
	}
}

// checkStampedResults checks each tool call of the run: called once, its
// result holding what the server answers and stamped with the budget left,
// kept under its server, ok but for Notion's, which must be an error.
func checkStampedResults(t *testing.T, transcript string, want map[string]string) {
	t.Helper()
	var v struct {
		Run       struct{ Status string } `json:"run"`
		ToolCalls []struct {
			Tool     string `json:"tool"`
			Result   string `json:"result"`
			Outcome  string `json:"outcome"`
			Metadata struct {
				Server string `json:"server"`
			} `json:"metadata"`
		} `json:"tool_calls"`
	}
	if err := json.Unmarshal([]byte(transcript), &v); err != nil || v.Run.Status != "completed" {
		t.Fatalf("the run: %v, status %q", err, v.Run.Status)
	}
	seen := map[string]bool{}
	for _, c := range v.ToolCalls {
		w, ok := want[c.Tool]
		if !ok || seen[c.Tool] {
			t.Errorf("unexpected call of %s: %s", c.Tool, c.Result)
			continue
		}
		seen[c.Tool] = true
		slug, _, _ := strings.Cut(c.Tool, "_")
		outcome := "ok"
		if slug == "notionlocal" {
			outcome = "error"
		}
		if !strings.Contains(c.Result, w) || !strings.Contains(c.Result, "\nremaining_tool_calls: ") ||
			c.Outcome != outcome || c.Metadata.Server != slug {
			t.Errorf("%s: %s (outcome %s, server %q), want %q and outcome %s", c.Tool, c.Result, c.Outcome, c.Metadata.Server, w, outcome)
		}
	}
	for tool := range want {
		if !seen[tool] {
			t.Errorf("the run did not call %s", tool)
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
