package telemetry

import (
	"context"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Attribute keys of the GenAI and MCP semantic conventions, and the platform's own.
const (
	AttrOperationName   = "gen_ai.operation.name"
	AttrProviderName    = "gen_ai.provider.name"
	AttrRequestModel    = "gen_ai.request.model"
	AttrInputTokens     = "gen_ai.usage.input_tokens"  //nolint:gosec // G101: an attribute name (token counts), no credential
	AttrOutputTokens    = "gen_ai.usage.output_tokens" //nolint:gosec // G101: an attribute name (token counts), no credential
	AttrFinishReasons   = "gen_ai.response.finish_reasons"
	AttrToolName        = "gen_ai.tool.name"
	AttrToolCallID      = "gen_ai.tool.call.id"
	AttrToolType        = "gen_ai.tool.type"
	AttrToolArguments   = "gen_ai.tool.call.arguments"
	AttrToolResult      = "gen_ai.tool.call.result"
	AttrMCPMethod       = "mcp.method.name"
	AttrMCPSession      = "mcp.session.id"
	AttrMCPProtocol     = "mcp.protocol.version"
	AttrNetworkTranport = "network.transport"
	AttrErrorType       = "error.type"
	AttrRunID           = "guilds.run.id"
	AttrToolClass       = "guilds.tool.class"
	AttrToolOutcome     = "guilds.tool.outcome"
	AttrMCPServer       = "guilds.mcp.server"
)

// ErrorToolError is error.type of an MCP call whose result has isError set.
const ErrorToolError = "tool_error"

// MaxContent bounds a captured argument or result, in bytes.
const MaxContent = 4096

const scope = "github.com/guilds/guilds"

// tracer follows the global provider, so code that starts spans needs no
// wiring: before Setup (or with tracing off) its spans record nothing. The
// provider's tracer is kept while the provider stays (a provider's Tracer
// takes a lock and a map look-up on every call).
func tracer() trace.Tracer {
	tp := otel.GetTracerProvider()
	if c := cachedTracer.Load(); c != nil && c.tp == tp {
		return c.tracer
	}
	t := tp.Tracer(scope)
	cachedTracer.Store(&providerTracer{tp: tp, tracer: t})
	return t
}

type providerTracer struct {
	tp     trace.TracerProvider
	tracer trace.Tracer
}

var cachedTracer atomic.Pointer[providerTracer]

// tracing is whether a provider that records was installed: without one,
// the span helpers start nothing at all (not even a non-recording span).
var tracing atomic.Bool

// noSpan is the span of a call when tracing is off: it records nothing.
var noSpan = trace.SpanFromContext(context.Background())

// The start options are made once: a span's own attributes are set when it
// ends, in one call (one copy into the span, and none when it is not
// recording). No sampler of the platform's (OTEL_TRACES_SAMPLER) reads
// attributes, so they need not be known at the start.
var (
	internalSpan = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}
	clientSpan   = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindClient)}
)

func start(ctx context.Context, name string, opts []trace.SpanStartOption) (context.Context, trace.Span) {
	if !tracing.Load() {
		return ctx, noSpan
	}
	return tracer().Start(ctx, name, opts...)
}

// ToolCall is the span and the timing of one tool call (execute_tool).
type ToolCall struct {
	span   trace.Span
	start  time.Time
	tool   string
	runID  string
	callID string
}

// StartToolCall starts the execute_tool span of a call of the model-facing
// tool name.
func StartToolCall(ctx context.Context, runID, name, callID string) (context.Context, *ToolCall) {
	t := &ToolCall{span: noSpan, tool: name, runID: runID, callID: callID}
	if tracing.Load() { // the span's name is made only when it is needed
		ctx, t.span = start(ctx, "execute_tool "+name, internalSpan)
	}
	t.start = time.Now()
	return ctx, t
}

// Content records the call's arguments and result when capture is on; the
// caller passes them redacted (the run's redactor), this cuts them short.
func (t *ToolCall) Content(arguments, result string) {
	if !captureContent.Load() || !t.span.IsRecording() {
		return
	}
	t.span.SetAttributes(attribute.String(AttrToolArguments, Truncate(arguments)), attribute.String(AttrToolResult, Truncate(result)))
}

// End closes the span and observes the call's duration. kind is the
// snapshot's tool kind (native, script, mcp, adapter), class its risk class,
// outcome the stored outcome (ok, error, refused).
func (t *ToolCall) End(kind, class, outcome string) {
	toolCallSeconds.WithLabelValues(t.tool, label(class), label(outcome)).Observe(time.Since(t.start).Seconds())
	if !t.span.IsRecording() {
		t.span.End()
		return
	}
	attrs := [8]attribute.KeyValue{
		attribute.String(AttrOperationName, "execute_tool"), attribute.String(AttrToolName, t.tool),
		attribute.String(AttrToolCallID, t.callID), attribute.String(AttrRunID, t.runID),
		attribute.String(AttrToolType, toolType(kind)), attribute.String(AttrToolClass, class),
		attribute.String(AttrToolOutcome, outcome),
	}
	n := 7
	if outcome != "ok" {
		attrs[n] = attribute.String(AttrErrorType, outcome)
		n++
		t.span.SetStatus(codes.Error, "")
	}
	t.span.SetAttributes(attrs[:n]...)
	t.span.End()
}

// toolType maps a tool kind to gen_ai.tool.type: a call the platform sends
// to a service is an extension, one it runs itself a function.
func toolType(kind string) string {
	switch kind {
	case "mcp", "adapter":
		return "extension"
	case "":
		return "_OTHER"
	}
	return "function"
}

// ModelTurn is the span of one model call (chat).
type ModelTurn struct {
	span                   trace.Span
	runID, provider, model string
}

// StartModelTurn starts the chat span of a run's model turn.
func StartModelTurn(ctx context.Context, runID, provider, model string) (context.Context, *ModelTurn) {
	m := &ModelTurn{span: noSpan, runID: runID, provider: provider, model: model}
	if tracing.Load() {
		ctx, m.span = start(ctx, "chat "+model, clientSpan)
	}
	return ctx, m
}

// End closes the span with the usage the provider reported, or the error's type.
func (m *ModelTurn) End(inputTokens, outputTokens int, finishReason, errType string) {
	if m.span.IsRecording() {
		m.span.SetAttributes(attribute.String(AttrOperationName, "chat"), attribute.String(AttrProviderName, m.provider),
			attribute.String(AttrRequestModel, m.model), attribute.String(AttrRunID, m.runID))
		if errType != "" {
			m.span.SetAttributes(attribute.String(AttrErrorType, errType))
			m.span.SetStatus(codes.Error, "")
		} else {
			m.span.SetAttributes(attribute.Int(AttrInputTokens, inputTokens), attribute.Int(AttrOutputTokens, outputTokens))
			if finishReason != "" {
				m.span.SetAttributes(attribute.StringSlice(AttrFinishReasons, []string{finishReason}))
			}
		}
	}
	m.span.End()
}

// MCPRequest is the client span and the timing of one MCP request.
type MCPRequest struct {
	span   trace.Span
	start  time.Time
	method string
	target string
	server string
	// transport, sessionID and protocol are the session's, set by Session.
	transport, sessionID, protocol string
	session                        bool
}

// StartMCPRequest starts the client span of method ("tools/call") on target
// (the server's tool name; "" for a listing).
func StartMCPRequest(ctx context.Context, method, target string) (context.Context, *MCPRequest) {
	r := &MCPRequest{span: noSpan, method: method, target: target}
	if tracing.Load() {
		name := method
		if target != "" {
			name += " " + target
		}
		ctx, r.span = start(ctx, name, clientSpan)
	}
	r.start = time.Now()
	return ctx, r
}

// Session names the session the request went on: the server's slug, the
// transport (http, sse, stdio), the session id and the negotiated revision.
func (r *MCPRequest) Session(server, transport, sessionID, protocolVersion string) {
	r.server = server
	r.transport, r.sessionID, r.protocol, r.session = transport, sessionID, protocolVersion, true
}

// End closes the span and observes the request's duration; errType is ""
// on success, ErrorToolError for a result with isError, else a short class
// of the failure (never its message, which may quote a server's answer).
func (r *MCPRequest) End(errType string) {
	outcome := "ok"
	if errType != "" {
		outcome = errType
	}
	mcpRequestSeconds.WithLabelValues(label(r.server), r.method, outcome).Observe(time.Since(r.start).Seconds())
	if !r.span.IsRecording() {
		r.span.End()
		return
	}
	var attrs [8]attribute.KeyValue
	attrs[0] = attribute.String(AttrMCPMethod, r.method)
	n := 1
	add := func(kv attribute.KeyValue) { attrs[n] = kv; n++ }
	if r.target != "" {
		add(attribute.String(AttrToolName, r.target))
		add(attribute.String(AttrOperationName, "execute_tool"))
	}
	if r.session {
		add(attribute.String(AttrMCPServer, r.server))
		add(attribute.String(AttrNetworkTranport, netTransport(r.transport)))
		if r.sessionID != "" {
			add(attribute.String(AttrMCPSession, r.sessionID))
		}
		if r.protocol != "" {
			add(attribute.String(AttrMCPProtocol, r.protocol))
		}
	}
	if errType != "" {
		add(attribute.String(AttrErrorType, errType))
		r.span.SetStatus(codes.Error, "")
	}
	r.span.SetAttributes(attrs[:n]...)
	r.span.End()
}

func netTransport(t string) string {
	if t == "stdio" {
		return "pipe"
	}
	return "tcp"
}

// TraceMeta is the W3C trace context of ctx's span for a request's _meta
// (traceparent, and tracestate when set); nil without a span context.
func TraceMeta(ctx context.Context) map[string]any {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	c := make(metaCarrier, 2)
	propagation.TraceContext{}.Inject(ctx, c)
	if len(c) == 0 {
		return nil
	}
	return c
}

// metaCarrier lets the propagator write into the _meta map itself.
type metaCarrier map[string]any

func (c metaCarrier) Get(key string) string { s, _ := c[key].(string); return s }
func (c metaCarrier) Set(key, value string) { c[key] = value }
func (c metaCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}

// Truncate cuts s to MaxContent bytes on a rune boundary.
func Truncate(s string) string {
	if len(s) <= MaxContent {
		return s
	}
	cut := MaxContent
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…[truncated]"
}
