package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Every metric of the platform is named guilds_*.
var (
	toolCallSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "guilds_tool_call_duration_seconds", Help: "Tool calls by model-facing tool, risk class and outcome (ok, error, refused).",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 90},
	}, []string{"tool", "class", "outcome"})
	mcpRequestSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "guilds_mcp_request_duration_seconds", Help: "MCP requests by server, method and outcome (ok, tool_error or the failure's class).",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 90},
	}, []string{"server", "method", "outcome"})
	tokenRefreshes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "guilds_token_refreshes_total", Help: "OAuth token refreshes forced by a 401, by outcome.",
	}, []string{"outcome"})
	runsFinished = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "guilds_runs_total", Help: "Finished runs by status.",
	}, []string{"status"})
	sandboxExecs = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "guilds_sandbox_exec_duration_seconds", Help: "Commands run in agent sandboxes, by outcome (ok, nonzero, timeout, error).",
		Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
	}, []string{"outcome"})
)

func init() {
	prometheus.MustRegister(toolCallSeconds, mcpRequestSeconds, tokenRefreshes, runsFinished, sandboxExecs)
}

// TokenRefresh counts one refresh: outcome "ok" or "error".
func TokenRefresh(outcome string) { tokenRefreshes.WithLabelValues(outcome).Inc() }

// RunFinished counts a run that ended with status.
func RunFinished(status string) { runsFinished.WithLabelValues(label(status)).Inc() }

func label(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
