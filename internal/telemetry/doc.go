// Package telemetry holds the platform's OpenTelemetry traces and its
// Prometheus metrics of tool calls, MCP requests, token refreshes, runs and
// sandbox execs.
//
// Traces are off unless an OTLP endpoint is named by the standard variables
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT); Setup
// then installs the global tracer provider, the W3C propagators and, through
// TemporalInterceptor, Temporal's own workflow and activity spans. The
// platform's spans follow the GenAI and MCP semantic conventions:
//
//	RunWorkflow:run                       (Temporal)
//	├─ RunActivity:run.model → chat {model}
//	└─ RunActivity:run.tool  → execute_tool {tool} → tools/call {remote tool}
//
// No argument or result is recorded unless GUILDS_OTEL_CAPTURE_CONTENT=1, and
// then only as the run's redactor leaves it, cut to MaxContent bytes.
//
// Metrics are on the process's /metrics, every name under the guilds_ prefix:
// the API's for `guilds serve` and `guilds dev`, and for `guilds worker`,
// where tool calls, MCP requests, token refreshes and sandbox execs happen,
// the worker's own listener (GUILDS_WORKER_METRICS_ADDR). Sandbox execs are
// observed where the workspace manager runs them (SandboxExec), not by a
// wrapper around the driver, which would hide the driver's optional methods.
package telemetry
