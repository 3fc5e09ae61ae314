package browserops

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchPages are the fixture pages the snapshot size is measured on.
var benchPages = []string{"form.html", "panel.html", "dialog.html", "frame.html", "change.html", "catalog.html"}

// interactiveJS counts the elements a person can act on (in the page and
// its same-origin frames), which every snapshot must give a reference.
const interactiveJS = `const count = (d) => [...d.querySelectorAll('a[href], button, input, select, textarea, [tabindex], [contenteditable=""], [contenteditable=true]')]
  .filter(e => e.getClientRects().length > 0).length
  + [...d.querySelectorAll('iframe')].reduce((n, f) => n + (f.contentDocument ? count(f.contentDocument) : 0), 0);
return count(document)`

// TestSnapshotSizeAgainstPlaywrightMCP compares browser_snapshot with
// Playwright MCP's browser_snapshot of the same pages in the same Chromium
// (attached over CDP). It needs Playwright MCP installed somewhere:
//
//	npm install --prefix /tmp/pwmcp @playwright/mcp
//	GUILDS_PWMCP_CLI=/tmp/pwmcp/node_modules/@playwright/mcp/cli.js \
//	  go test ./internal/browserops/ -run SnapshotSize -v
func TestSnapshotSizeAgainstPlaywrightMCP(t *testing.T) {
	cliPath := os.Getenv("GUILDS_PWMCP_CLI")
	if cliPath == "" {
		t.Skip("set GUILDS_PWMCP_CLI to @playwright/mcp's cli.js to compare with Playwright MCP")
	}
	cfg := hostBrowser(t)
	srv := fixtures(t)
	ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": "about:blank"}))
	var urls []string
	for _, p := range benchPages {
		urls = append(urls, srv.URL+"/"+p)
	}
	script, err := filepath.Abs("testdata/bench/pwmcp-snapshot.mjs")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", append([]string{script, cliPath, "http://" + cfg.CDPAddr}, urls...)...)
	cmd.Stderr = os.Stderr
	cmd.Dir = t.TempDir() // Playwright MCP writes its logs where it runs
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("playwright mcp: %v", err)
	}
	theirs := map[string]struct {
		Bytes     int    `json:"bytes"`
		YAMLBytes int    `json:"yaml_bytes"`
		Text      string `json:"text"`
	}{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r struct {
			URL       string `json:"url"`
			Bytes     int    `json:"bytes"`
			YAMLBytes int    `json:"yaml_bytes"`
			Text      string `json:"text"`
		}
		if json.Unmarshal(sc.Bytes(), &r) == nil {
			theirs[r.URL] = struct {
				Bytes     int    `json:"bytes"`
				YAMLBytes int    `json:"yaml_bytes"`
				Text      string `json:"text"`
			}{r.Bytes, r.YAMLBytes, r.Text}
		}
	}
	var table strings.Builder
	fmt.Fprintf(&table, "| page | browser_snapshot bytes | refs | interactive elements | Playwright MCP bytes (whole result / yaml) | ratio |\n| --- | --- | --- | --- | --- | --- |\n")
	var mine, pw int
	for _, u := range urls {
		// Playwright MCP may have left the tools' page elsewhere: open it.
		ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": u}))
		resp := callResp(t, cfg, ToolSnapshot, nil)
		snap := ok(t, resp.Text)
		var n int
		if err := json.Unmarshal([]byte(ok(t, call(t, cfg, ToolEval, map[string]any{"script": interactiveJS}))), &n); err != nil {
			t.Fatal(err)
		}
		refs := strings.Count(snap, "[ref=")
		if refs < n {
			t.Errorf("%s: %d refs for %d interactive elements:\n%s", u, refs, n, snap)
		}
		th := theirs[u]
		if th.Bytes == 0 {
			t.Fatalf("no Playwright MCP snapshot of %s", u)
		}
		ratio := float64(len(snap)) / float64(th.Bytes)
		name := u[strings.LastIndex(u, "/")+1:]
		fmt.Fprintf(&table, "| %s | %d | %d | %d | %d / %d | %.2f |\n", name, len(snap), refs, n, th.Bytes, th.YAMLBytes, ratio)
		mine += len(snap)
		pw += th.Bytes
		if testing.Verbose() && name == "catalog.html" {
			t.Logf("ours:\n%s\n\nPlaywright MCP:\n%s", snap, th.Text)
		}
	}
	fmt.Fprintf(&table, "| all | %d | | | %d | %.2f |\n", mine, pw, float64(mine)/float64(pw))
	t.Logf("\n%s", table.String())
	if float64(mine) > 0.7*float64(pw) {
		t.Errorf("browser_snapshot is %.2fx Playwright MCP's, over the 0.7x target", float64(mine)/float64(pw))
	}
}

// TestLatencyP50 measures one call of browser_snapshot and of browser_click
// through the helper (attach, work, detach) on the catalog page; it logs
// the medians and asserts nothing about time. GUILDS_BROWSER_BENCH=1 runs it.
func TestLatencyP50(t *testing.T) {
	if os.Getenv("GUILDS_BROWSER_BENCH") == "" {
		t.Skip("set GUILDS_BROWSER_BENCH=1 to measure")
	}
	cfg := hostBrowser(t)
	srv := fixtures(t)
	ok(t, call(t, cfg, ToolNavigate, map[string]any{"url": srv.URL + "/catalog.html"}))
	const n = 40
	var snaps, clicks []time.Duration
	for range n {
		start := time.Now()
		snap := ok(t, call(t, cfg, ToolSnapshot, nil))
		snaps = append(snaps, time.Since(start))
		r := refOf(t, snap, `button "Save Aurora 1 for later"`)
		start = time.Now()
		ok(t, call(t, cfg, ToolClick, map[string]any{"ref": r}))
		clicks = append(clicks, time.Since(start))
	}
	p50 := func(d []time.Duration) time.Duration { slices.Sort(d); return d[len(d)/2] }
	t.Logf("p50 over %d calls on catalog.html: browser_snapshot %s, browser_click %s", n, p50(snaps).Round(100*time.Microsecond), p50(clicks).Round(100*time.Microsecond))
}
