package api_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// screenshot writes the page into docs/app/ when GUILDS_APP_SCREENSHOTS is
// set (the documentation's images are refreshed by the tests).
func (b *appBrowser) screenshot(name string) {
	b.t.Helper()
	if os.Getenv("GUILDS_APP_SCREENSHOTS") == "" {
		return
	}
	c, stop := context.WithTimeout(b.ctx, time.Minute)
	defer stop()
	png, err := chromedp.Run(c, chromedp.CaptureScreenshot())
	if err != nil {
		b.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join("..", "docs", "app", name), png, 0o644); err != nil { //nolint:gosec // a documentation image
		b.t.Fatal(err)
	}
}

// axeScript is axe-core as .ci/run installs it (pinned there).
func axeScript(t *testing.T) string {
	t.Helper()
	path := os.Getenv("GUILDS_AXE_JS")
	if path == "" {
		path = "/opt/axe-core/node_modules/axe-core/axe.min.js"
	}
	js, err := os.ReadFile(path) //nolint:gosec // a test fixture's path
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("axe-core is not installed (.ci/run installs it): %v", err)
		}
		t.Skipf("no axe-core at %s", path)
	}
	return string(js)
}

type axeViolation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any `json:"target"`
	} `json:"nodes"`
}

// accessible runs axe-core over the page as it is now and fails the test
// on every serious or critical violation, naming the page and the elements.
func (b *appBrowser) accessible(axe, page string) {
	b.t.Helper()
	if b.eval(`String(typeof window.axe)`) != "object" {
		b.eval(axe + `;""`)
	}
	out := b.eval(`axe.run(document, { resultTypes: ["violations"] }).then((r) => JSON.stringify(r.violations))`)
	var vs []axeViolation
	if err := json.Unmarshal([]byte(out), &vs); err != nil {
		b.t.Fatalf("axe on %s: %v (%.200s)", page, err, out)
	}
	for _, v := range vs {
		if v.Impact != "serious" && v.Impact != "critical" {
			continue
		}
		var where []string
		for _, n := range v.Nodes {
			where = append(where, strings.Trim(strings.ReplaceAll(jsonText(n.Target), `"`, ""), "[]"))
		}
		b.t.Errorf("%s: %s violation %s (%s) at %s", page, v.Impact, v.ID, v.Help, strings.Join(where, "; "))
	}
}

func jsonText(v any) string { out, _ := json.Marshal(v); return string(out) }
