package telemetry

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The Grafana dashboard queries only metrics this package (or the API's
// request middleware, api/ops.go) registers, by their exported names.
func TestDashboardQueriesRegisteredMetrics(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/grafana/guilds.json")
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("deploy/grafana/guilds.json: %v", err)
	}
	// A vector is gathered once it has a child.
	TokenRefresh("ok")
	RunFinished("completed")
	SandboxExec("ok", time.Millisecond)
	toolCallSeconds.WithLabelValues("t", "c", "ok").Observe(0)
	mcpRequestSeconds.WithLabelValues("s", "tools/call", "ok").Observe(0)
	families, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{"guilds_http_requests_total": true, "guilds_http_request_seconds": true} // api/ops.go
	for _, f := range families {
		known[f.GetName()] = true
	}
	name := regexp.MustCompile(`guilds_[a-z_]+`)
	queried := 0
	for _, p := range d.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				base := m
				for _, suffix := range []string{"_bucket", "_count", "_sum"} {
					if b, ok := strings.CutSuffix(m, suffix); ok && known[b] {
						base = b
					}
				}
				if !known[base] {
					t.Errorf("panel %q queries %s, which nothing registers", p.Title, m)
				}
				queried++
			}
		}
	}
	if queried == 0 {
		t.Fatal("the dashboard queries nothing")
	}
}
