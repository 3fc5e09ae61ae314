package browserops

import (
	"testing"
	"time"
)

func TestScratch(t *testing.T) {
	cfg := hostBrowser(t)
	srv := fixtures(t)
	start := time.Now()
	t.Log(call(t, cfg, ToolNavigate, map[string]any{"url": srv.URL + "/alerts.html"}), time.Since(start))
	time.Sleep(600 * time.Millisecond)
	start = time.Now()
	t.Log(call(t, cfg, ToolEval, map[string]any{"script": "return document.title"}), time.Since(start))
}
