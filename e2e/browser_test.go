package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/workspaces"
	"github.com/guilds/guilds/sandbox/dockertest"
)

// siteToken is a credential the fixture page prints; it is granted to the
// agent as a secret, so every result that shows it is redacted.
const siteToken = "site-token-e2e-0123456789abcdef"

// TestBrowserRun is a real browser run on the deployed platform: the worker
// runs the agent's workspace on the sandbox image with network none, its
// Chromium reaches the fixture site only through the worker's proxy, and a
// model that reads each result navigates, snapshots, fills a form, clicks,
// scrolls a panel, evaluates and screenshots. The screenshot decodes at the
// viewport's size, and a page that prints a granted secret is redacted.
func TestBrowserRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the platform as separate processes and a sandbox")
	}
	cli := dockertest.Client(t)
	image := dockertest.AgentImage(t, cli)
	site := fixtureSite(t)

	model := newReadingModel(t, boxModelKey, []step{
		func(string) []toolCall {
			return []toolCall{{"browser_navigate", map[string]any{"url": site + "/form.html"}}}
		},
		func(string) []toolCall { return []toolCall{{"browser_snapshot", map[string]any{}}} },
		func(snap string) []toolCall {
			return []toolCall{
				{"browser_fill", map[string]any{"ref": ref(snap, `textbox "Name"`), "value": "Ada"}},
				{"browser_type", map[string]any{"ref": ref(snap, `textbox "Email"`), "text": "ada@example.com"}},
				{"browser_fill", map[string]any{"ref": ref(snap, `combobox "Country"`), "value": "France"}},
				{"browser_click", map[string]any{"ref": ref(snap, `button "Create account"`)}},
			}
		},
		func(string) []toolCall {
			return []toolCall{{"browser_eval", map[string]any{"script": "return document.getElementById('out').textContent"}}}
		},
		func(string) []toolCall {
			return []toolCall{{"browser_navigate", map[string]any{"url": site + "/panel.html"}}, {"browser_snapshot", map[string]any{}}}
		},
		func(snap string) []toolCall {
			return []toolCall{{"browser_scroll", map[string]any{"direction": "down", "ref": ref(snap, "scrollable")}}}
		},
		func(string) []toolCall { return []toolCall{{"browser_screenshot", map[string]any{}}} },
		func(string) []toolCall {
			return []toolCall{{"browser_navigate", map[string]any{"url": site + "/token.html"}},
				{"browser_eval", map[string]any{"script": "return document.body.innerText"}},
				{"browser_navigate", map[string]any{"url": "http://169.254.169.254/latest/meta-data/"}}}
		},
	})
	scope := fmt.Sprintf("e2e-browser-%d", time.Now().UnixNano())
	var agent string
	t.Cleanup(func() {
		if agent != "" {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_ = cli.VolumeRemove(ctx, workspaces.HomeVolume(agent), true)
		}
	})
	d := deploy(t, map[string]string{
		"OPENROUTER_API_KEY": boxModelKey, "GUILDS_OPENROUTER_BASE_URL": model.URL,
		"GUILDS_SANDBOX_DRIVER": "docker", "GUILDS_SANDBOX_IMAGE": image, "GUILDS_SANDBOX_SCOPE": scope,
		// The fixture listens on this host's own address, private on some
		// machines; metadata stays refused whatever this says.
		"GUILDS_BROWSER_ALLOW_PRIVATE": "1",
		// The agent's sandbox comes from the pool, so its home and the
		// proxy's folder reach it at the claim (ADR 0712).
		"GUILDS_SANDBOX_POOL": "1",
	})
	if os.Geteuid() == 0 {
		waitLog(t, d, "worker", "sandbox pool full")
	}

	org := d.must(201, "POST", "/api/orgs", map[string]any{"name": "Acme"})["id"].(string)
	guild := d.must(201, "POST", "/api/orgs/"+org+"/guilds", map[string]any{"name": "Web"})["id"].(string)
	agent = d.must(201, "POST", "/api/guilds/"+guild+"/agents", map[string]any{"name": "Surfer",
		"config": map[string]any{"browser": true}})["id"].(string)
	if r := d.Call("PUT", "/api/orgs/"+org+"/secrets/SITE_TOKEN", map[string]any{"value": siteToken}); r.Status != 201 {
		t.Fatalf("secret: %d %s", r.Status, r.Body)
	}
	if r := d.Call("PUT", "/api/orgs/"+org+"/secrets/SITE_TOKEN/grants", map[string]any{"scope": "guild", "scope_id": guild, "enabled": true}); r.Status >= 300 {
		t.Fatalf("grant: %d %s", r.Status, r.Body)
	}

	offered := d.Call("GET", "/api/agents/"+agent+"/offered-tools?trigger=direct", nil)
	for _, name := range []string{"browser_navigate", "browser_snapshot", "browser_click", "browser_type", "browser_fill",
		"browser_scroll", "browser_screenshot", "browser_eval"} {
		if !strings.Contains(string(offered.Body), `"`+name+`"`) {
			t.Fatalf("a browser agent is not offered %s: %d %s", name, offered.Status, offered.Body)
		}
	}

	runID := d.must(201, "POST", "/api/agents/"+agent+"/runs", map[string]any{"message": "Sign up on the site."})["id"].(string)
	transcript := d.waitRun(runID)
	tr := transcriptOf(t, transcript)
	wants := []struct{ tool, want string }{
		{"browser_navigate", "(HTTP 200)"},
		{"browser_snapshot", `button "Create account" [ref=`},
		{"browser_fill", `its value is now "Ada"`},
		{"browser_type", `its value is now "ada@example.com"`},
		{"browser_fill", `"France"`},
		{"browser_click", `clicked button "Create account"`},
		{"browser_eval", `"Welcome Ada <ada@example.com> from fr"`},
		{"browser_navigate", "(HTTP 200)"},
		{"browser_snapshot", "scrollable"},
		{"browser_scroll", "scrolled the panel div#list down: y 0 → 200"},
		{"browser_screenshot", "saved a 1280×720 JPEG"},
		{"browser_navigate", "(HTTP 200)"},
		{"browser_eval", "the token is [REDACTED]"},
		{"browser_navigate", "refused by the platform's outbound address policy"},
	}
	if len(tr.ToolCalls) != len(wants) {
		t.Fatalf("%d tool calls, want %d:\n%s", len(tr.ToolCalls), len(wants), transcript)
	}
	for i, w := range wants {
		c := tr.ToolCalls[i]
		if c.Tool != w.tool || !strings.Contains(c.Result, w.want) {
			t.Errorf("call %d: %s %q; want %s containing %q", i, c.Tool, c.Result, w.tool, w.want)
			if i > 0 {
				t.Logf("the call before it: %s %q", tr.ToolCalls[i-1].Tool, tr.ToolCalls[i-1].Result)
			}
		}
	}
	for place, text := range map[string]string{"the transcript": transcript, "what the model received": model.Received(), "the logs": d.Logs()} {
		for _, s := range append([]string{boxModelKey, siteToken}, d.secrets...) {
			if s != "" && strings.Contains(text, s) {
				t.Errorf("%s holds a credential (%.8s…)", place, s)
			}
		}
	}

	if os.Geteuid() == 0 && !strings.Contains(d.Logs(), "sandbox claimed from the pool") {
		t.Errorf("the agent's sandbox did not come from the pool:\n%s", d.Logs())
	}

	// The screenshot, read from the agent's home volume on the engine's host.
	v, err := cli.VolumeInspect(context.Background(), workspaces.HomeVolume(agent))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(v.Mountpoint, "screenshots", "latest.jpg"))
	if err != nil {
		t.Fatal(err)
	}
	img, err := jpeg.Decode(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the screenshot does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1280 || b.Dy() != 720 {
		t.Errorf("the screenshot is %dx%d, want the 1280x720 viewport", b.Dx(), b.Dy())
	}
}

// fixtureSite serves the browser fixtures on an address of this host that
// is not loopback (a sandbox's loopback is its own) and returns its URL.
func fixtureSite(t *testing.T) string {
	t.Helper()
	var ip string
	ifaces, _ := net.Interfaces()
	for _, i := range ifaces {
		addrs, _ := i.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && ip == "" && i.Flags&net.FlagUp != 0 && !n.IP.IsLoopback() && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
				ip = n.IP.String()
			}
		}
	}
	if ip == "" {
		dockertest.Unavailable(t, "this host has no non-loopback IPv4 address for the fixture site")
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServer(http.Dir("../internal/browserops/testdata")))
	mux.HandleFunc("/token.html", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "<!doctype html><title>Token</title><p>the token is "+siteToken+"</p>")
	})
	srv := httptest.NewUnstartedServer(mux)
	_ = srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL
}

var refPattern = regexp.MustCompile(`\[ref=(e[0-9]+)\]`)

// ref is the reference on the first snapshot line holding part.
func ref(snap, part string) string {
	for _, line := range strings.Split(snap, "\n") {
		if m := refPattern.FindStringSubmatch(line); m != nil && strings.Contains(line, part) {
			return m[1]
		}
	}
	return "e0"
}

// step makes a turn's calls from the last tool result the model received.
type step func(lastResult string) []toolCall

// readingModel is a chat completions endpoint whose turns are made from
// what it was sent: each step sees the last tool result, so it can use the
// references of a snapshot.
type readingModel struct {
	*httptest.Server
	key string

	mu       sync.Mutex
	steps    []step
	requests [][]byte
	calls    int
}

func newReadingModel(t *testing.T, key string, steps []step) *readingModel {
	m := &readingModel{key: key, steps: steps}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

func (m *readingModel) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	if r.Header.Get("Authorization") != "Bearer "+m.key {
		http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
		return
	}
	var body struct {
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(raw, &body)
	last := ""
	for _, msg := range body.Messages {
		if msg.Role == "tool" {
			last = fmt.Sprint(msg.Content)
		}
	}
	m.mu.Lock()
	m.requests = append(m.requests, raw)
	var turn []toolCall
	if len(m.steps) > 0 {
		turn = m.steps[0](last)
		m.steps = m.steps[1:]
	}
	m.mu.Unlock()
	msg := map[string]any{"role": "assistant", "content": "Done."}
	finish := "stop"
	if len(turn) > 0 {
		var calls []any
		for _, c := range turn {
			m.calls++
			args, _ := json.Marshal(c.Args)
			calls = append(calls, map[string]any{"id": fmt.Sprintf("call_%d", m.calls), "type": "function",
				"function": map[string]any{"name": c.Name, "arguments": string(args)}})
		}
		msg = map[string]any{"role": "assistant", "content": "", "tool_calls": calls}
		finish = "tool_calls"
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"finish_reason": finish, "message": msg}}})
}

// Received is every request body the model was sent, joined.
func (m *readingModel) Received() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var all []byte
	for _, r := range m.requests {
		all = append(append(all, r...), '\n')
	}
	return string(all)
}
