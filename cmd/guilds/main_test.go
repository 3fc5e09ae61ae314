package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/devserver"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/testlog"
	"github.com/guilds/guilds/internal/testtemporal"
)

// asMainEnv makes the test binary run the real main with the arguments after
// "--", so that a test sees what happens before run: the process's own
// hardening and the settings read from files.
const asMainEnv = "GUILDS_TEST_AS_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(asMainEnv) == "1" {
		for i, a := range os.Args {
			if a == "--" {
				os.Args = append([]string{"guilds"}, os.Args[i+1:]...)
				break
			}
		}
		main()
	}
	os.Exit(testtemporal.Main(m))
}

func runCmd(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"nope"}, {"migrate"}, {"migrate", "sideways"}, {"migrate", "down", "-1"},
		{"tokens"}, {"tokens", "create"}, {"tokens", "create", "--admin", "--org", "x"}, {"serve", "extra"}} {
		code, _, stderr := runCmd(t, "", args...)
		if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") > 1 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one clear line", args, code, stderr)
		}
	}
	if code, out, _ := runCmd(t, "", "help"); code != 0 || !strings.Contains(out, "migrate") {
		t.Errorf("help: %d %s", code, out)
	}
	if code, out, _ := runCmd(t, "", "version"); code != 0 || !strings.HasPrefix(out, "guilds ") {
		t.Errorf("version: %d %s", code, out)
	}
}

func TestAuthModeLocalNeedsLoopback(t *testing.T) {
	t.Setenv("GUILDS_AUTH_MODE", "local")
	t.Setenv("GUILDS_HTTP_ADDR", "0.0.0.0:8080")
	code, _, stderr := runCmd(t, "", "serve")
	if code != 2 || !strings.Contains(stderr, "loopback") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

func TestUnknownTemporalCodecIsRefused(t *testing.T) {
	t.Setenv("GUILDS_TEMPORAL_CODEC", "rot13")
	code, _, stderr := runCmd(t, "", "serve")
	if code != 2 || !strings.Contains(stderr, "GUILDS_TEMPORAL_CODEC must be none or encrypt") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

func TestMigrateAndTokens(t *testing.T) {
	t.Setenv("DATABASE_URL", testdb.URL(t))
	if code, out, stderr := runCmd(t, "", "migrate", "status"); code != 0 || !strings.Contains(out, "001_foundation") || !strings.Contains(out, "applied") {
		t.Fatalf("status: %d %s %s", code, out, stderr)
	}
	if code, out, stderr := runCmd(t, "", "migrate", "down", "all"); code != 0 || !strings.Contains(out, "rolled back") {
		t.Fatalf("down: %d %s %s", code, out, stderr)
	}
	if code, out, stderr := runCmd(t, "", "migrate", "up"); code != 0 || !strings.Contains(out, "applied") {
		t.Fatalf("up: %d %s %s", code, out, stderr)
	}
	code, out, stderr := runCmd(t, "", "tokens", "create", "--admin")
	if code != 0 || !strings.HasPrefix(out, "gld_") {
		t.Fatalf("tokens: %d %s %s", code, out, stderr)
	}
	if code, _, stderr := runCmd(t, "", "tokens", "create", "--org", "00000000-0000-0000-0000-000000000000"); code != 1 || !strings.Contains(stderr, "organisation") {
		t.Fatalf("tokens for a missing org: %d %s", code, stderr)
	}
}

func TestUnreachableDatabaseIsOneClearLine(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://postgres@127.0.0.1:1/guilds?connect_timeout=2")
	code, _, stderr := runCmd(t, "", "migrate", "status")
	if code != 1 || !strings.Contains(stderr, "DATABASE_URL") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// devEnv is a running `guilds dev` started by a test.
type devEnv struct {
	API      string // http://127.0.0.1:port
	UI       string
	Temporal string // host:port of its Temporal dev server
	Token    string
	out      *testlog.Buffer
	cancel   context.CancelFunc
	done     chan int
}

// startDev runs `guilds dev` as a user would, with its own Temporal dev server
// and UI on free ports, and waits for the printed admin token.
func startDev(t *testing.T, env map[string]string) *devEnv {
	t.Helper()
	apiPort, _ := devserver.FreePort()
	tPort, _ := devserver.FreePort()
	uiPort, _ := devserver.FreePort()
	t.Setenv("DATABASE_URL", testdb.URL(t))
	t.Setenv("TEMPORAL_ADDRESS", "")
	t.Setenv("GUILDS_HTTP_ADDR", fmt.Sprintf("127.0.0.1:%d", apiPort))
	t.Setenv("GUILDS_DEV_TEMPORAL_PORT", fmt.Sprint(tPort))
	t.Setenv("GUILDS_DEV_TEMPORAL_UI_PORT", fmt.Sprint(uiPort))
	t.Setenv("GUILDS_DATA_DIR", t.TempDir())
	for k, v := range env {
		t.Setenv(k, v)
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &devEnv{API: fmt.Sprintf("http://127.0.0.1:%d", apiPort), UI: fmt.Sprintf("http://127.0.0.1:%d", uiPort),
		Temporal: fmt.Sprintf("127.0.0.1:%d", tPort), out: &testlog.Buffer{}, cancel: cancel, done: make(chan int, 1)}
	go func() { d.done <- run(ctx, []string{"dev"}, strings.NewReader(""), d.out, d.out) }()
	t.Cleanup(func() { d.stop(t) })
	for i := 0; i < 600 && d.Token == ""; i++ {
		select {
		case code := <-d.done:
			d.done <- code
			t.Fatalf("guilds dev exited %d: %s", code, d.out.String())
		case <-time.After(200 * time.Millisecond):
		}
		sc := bufio.NewScanner(strings.NewReader(d.out.String()))
		for sc.Scan() {
			if f := strings.TrimSpace(sc.Text()); strings.HasPrefix(f, "gld_") {
				d.Token = f
			}
		}
	}
	if d.Token == "" {
		t.Fatalf("no admin token printed: %s", d.out.String())
	}
	return d
}

// stop cancels `guilds dev` and checks that it stops cleanly.
func (d *devEnv) stop(t *testing.T) {
	t.Helper()
	d.cancel()
	select {
	case code := <-d.done:
		d.done <- code
		if code != 0 {
			t.Errorf("guilds dev stopped with %d", code)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("guilds dev did not stop after cancellation")
	}
}

// call sends an API request with the admin token and decodes a JSON reply into out.
func (d *devEnv) call(t *testing.T, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, _ := http.NewRequest(method, d.API+path, rd)
	req.Header.Set("Authorization", "Bearer "+d.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
		}
	}
	return resp.StatusCode
}

func TestDevServesInstanceAndTemporalUI(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server with its UI")
	}
	d := startDev(t, nil)
	for _, want := range []string{"API:", "Temporal:", "PostgreSQL:", d.UI} {
		if !strings.Contains(d.out.String(), want) {
			t.Errorf("start-up banner lacks %q:\n%s", want, d.out.String())
		}
	}
	var inst map[string]any
	if code := d.call(t, "GET", "/api/instance", nil, &inst); code != 200 || inst["auth_mode"] != "token" {
		t.Fatalf("/api/instance: %d %v", code, inst)
	}
	// The binary ships the adapters it imports, and the catalog says so.
	var servers []map[string]any
	d.call(t, "GET", "/api/mcp/servers", nil, &servers)
	available := map[string]bool{}
	for _, s := range servers {
		available[s["slug"].(string)], _ = s["available"].(bool)
	}
	for slug, want := range map[string]bool{"coingecko": true, "dexpaprika": true, "twitterapi": true, "x": true, "qonto": true, "alchemy": true, "gmail": true, "notion": true, "pinned_prices": true, "wallet": true} {
		if available[slug] != want {
			t.Errorf("%s available = %v, want %v", slug, available[slug], want)
		}
	}
	resp, err := http.Get(d.API + "/readyz")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("/readyz: %v %v", resp, err)
	}
	resp.Body.Close()
	var uiOK bool
	for i := 0; i < 50 && !uiOK; i++ {
		if resp, err := http.Get(d.UI + "/"); err == nil {
			uiOK = resp.StatusCode == 200
			resp.Body.Close()
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !uiOK {
		t.Error("the Temporal UI does not answer")
	}
	d.stop(t)
	if !strings.Contains(d.out.String(), "stopped") {
		t.Error("no stop message")
	}
}

// TestDevRunsAnAgentEndToEnd drives the production wiring as an operator would:
// an agent's run on the box's model key calls a native tool through grants,
// the Temporal worker and the result pipeline, and the note it wrote is there.
func TestDevRunsAnAgentEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Temporal dev server")
	}
	runAgentEndToEnd(t, nil)
}

// runAgentEndToEnd starts `guilds dev` with env added, runs an agent whose
// model writes the note todo.md ("buy milk"), checks the outcome and returns
// the environment and the run's id.
func runAgentEndToEnd(t *testing.T, env map[string]string) (*devEnv, string) {
	t.Helper()
	const boxKey = "sk-or-e2e-box-key-0123456789"
	var mu sync.Mutex
	var requests []map[string]any
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req map[string]any
		_ = json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		requests = append(requests, req)
		n := len(requests)
		mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+boxKey {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			args, _ := json.Marshal(map[string]string{"level": "agent", "key": "todo.md", "content": "buy milk"})
			_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"finish_reason": "tool_calls",
				"message": map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
					"id": "call_1", "type": "function", "function": map[string]any{"name": "note_write", "arguments": string(args)}}}}}}})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": "Noted."}}}})
	}))
	t.Cleanup(model.Close)
	devVars := map[string]string{"OPENROUTER_API_KEY": boxKey, "GUILDS_OPENROUTER_BASE_URL": model.URL}
	for k, v := range env {
		devVars[k] = v
	}
	d := startDev(t, devVars)

	var org, guild, agent map[string]any
	d.call(t, "POST", "/api/orgs", map[string]any{"name": "Acme"}, &org)
	d.call(t, "POST", "/api/orgs/"+org["id"].(string)+"/guilds", map[string]any{"name": "Ops"}, &guild)
	d.call(t, "POST", "/api/guilds/"+guild["id"].(string)+"/agents", map[string]any{"name": "Scribe"}, &agent)
	agentID := agent["id"].(string)

	var started map[string]any
	if code := d.call(t, "POST", "/api/agents/"+agentID+"/runs", map[string]any{"message": "Remember to buy milk."}, &started); code != 201 && code != 202 {
		t.Fatalf("start run: %d %v", code, started)
	}
	runID, _ := started["id"].(string)
	if runID == "" {
		if r, ok := started["run"].(map[string]any); ok {
			runID, _ = r["id"].(string)
		}
	}
	var tr struct {
		Run struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		} `json:"run"`
		Tools     []string `json:"offered_tools"`
		ToolCalls []struct {
			Tool, Result, Outcome string
		} `json:"tool_calls"`
	}
	for i := 0; i < 300; i++ {
		d.call(t, "GET", "/api/runs/"+runID, nil, &tr)
		if tr.Run.Status == "completed" || tr.Run.Status == "failed" || tr.Run.Status == "cancelled" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if tr.Run.Status != "completed" {
		t.Fatalf("run %s ended %q (%s)", runID, tr.Run.Status, tr.Run.Error)
	}
	if len(tr.ToolCalls) != 1 || tr.ToolCalls[0].Tool != "note_write" || !strings.Contains(tr.ToolCalls[0].Result, "remaining_tool_calls: ") {
		t.Fatalf("tool calls %+v", tr.ToolCalls)
	}
	offered := strings.Join(tr.Tools, " ")
	for _, want := range []string{"note_write", "record_search", "memory_write", "report_issue"} {
		if !strings.Contains(offered, want) {
			t.Errorf("offered tools lack %s: %v", want, tr.Tools)
		}
	}
	var notes []map[string]any
	d.call(t, "GET", "/api/agents/"+agentID+"/notes", nil, &notes)
	if len(notes) != 1 {
		t.Fatalf("notes after the run: %v", notes)
	}
	var note map[string]any
	d.call(t, "GET", "/api/agents/"+agentID+"/notes/todo.md", nil, &note)
	if !strings.Contains(fmt.Sprint(note), "buy milk") {
		t.Errorf("note content: %v", note)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(requests) != 2 {
		t.Fatalf("model saw %d requests", len(requests))
	}
	// The second turn carries the stamped tool result back to the model.
	if !strings.Contains(fmt.Sprint(requests[1]["messages"]), "remaining_tool_calls") {
		t.Error("the tool result did not reach the model")
	}
	return d, runID
}
