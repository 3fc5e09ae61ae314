package telemetry

import (
	"context"
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
// wiring: before Setup (or with tracing off) its spans record nothing.
func tracer() trace.Tracer { return otel.Tracer(scope) }

// ToolCall is the span and the timing of one tool call (execute_tool).
type ToolCall struct {
	span  trace.Span
	start time.Time
	tool  string
}

// StartToolCall starts the execute_tool span of a call of the model-facing
// tool name.
func StartToolCall(ctx context.Context, runID, name, callID string) (context.Context, *ToolCall) {
	ctx, span := tracer().Start(ctx, "execute_tool "+name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String(AttrOperationName, "execute_tool"), attribute.String(AttrToolName, name),
			attribute.String(AttrToolCallID, callID), attribute.String(AttrRunID, runID)))
	return ctx, &ToolCall{span: span, start: time.Now(), tool: name}
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
	if t.span.IsRecording() {
		t.span.SetAttributes(attribute.String(AttrToolType, toolType(kind)), attribute.String(AttrToolClass, class),
			attribute.String(AttrToolOutcome, outcome))
		if outcome != "ok" {
			t.span.SetAttributes(attribute.String(AttrErrorType, outcome))
			t.span.SetStatus(codes.Error, "")
		}
	}
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
type ModelTurn struct{ span trace.Span }

// StartModelTurn starts the chat span of a run's model turn.
func StartModelTurn(ctx context.Context, runID, provider, model string) (context.Context, *ModelTurn) {
	ctx, span := tracer().Start(ctx, "chat "+model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String(AttrOperationName, "chat"), attribute.String(AttrProviderName, provider),
			attribute.String(AttrRequestModel, model), attribute.String(AttrRunID, runID)))
	return ctx, &ModelTurn{span: span}
}

// End closes the span with the usage the provider reported, or the error's type.
func (m *ModelTurn) End(inputTokens, outputTokens int, finishReason, errType string) {
	if m.span.IsRecording() {
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
	server string
}

// StartMCPRequest starts the client span of method ("tools/call") on target
// (the server's tool name; "" for a listing).
func StartMCPRequest(ctx context.Context, method, target string) (context.Context, *MCPRequest) {
	name := method
	attrs := []attribute.KeyValue{attribute.String(AttrMCPMethod, method)}
	if target != "" {
		name += " " + target
		attrs = append(attrs, attribute.String(AttrToolName, target), attribute.String(AttrOperationName, "execute_tool"))
	}
	ctx, span := tracer().Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	return ctx, &MCPRequest{span: span, start: time.Now(), method: method}
}

// Session names the session the request went on: the server's slug, the
// transport (http, sse, stdio), the session id and the negotiated revision.
func (r *MCPRequest) Session(server, transport, sessionID, protocolVersion string) {
	r.server = server
	if !r.span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{attribute.String(AttrMCPServer, server), attribute.String(AttrNetworkTranport, netTransport(transport))}
	if sessionID != "" {
		attrs = append(attrs, attribute.String(AttrMCPSession, sessionID))
	}
	if protocolVersion != "" {
		attrs = append(attrs, attribute.String(AttrMCPProtocol, protocolVersion))
	}
	r.span.SetAttributes(attrs...)
}

// End closes the span and observes the request's duration; errType is ""
// on success, ErrorToolError for a result with isError, else a short class
// of the failure (never its message, which may quote a server's answer).
func (r *MCPRequest) End(errType string) {
	outcome := "ok"
	if errType != "" {
		outcome = errType
		if r.span.IsRecording() {
			r.span.SetAttributes(attribute.String(AttrErrorType, errType))
			r.span.SetStatus(codes.Error, "")
		}
	}
	mcpRequestSeconds.WithLabelValues(label(r.server), r.method, outcome).Observe(time.Since(r.start).Seconds())
	r.span.End()
}

func netTransport(t string) string {
	if t == "stdio" {
		return "pipe"
	}
	return "tcp"
}

// TraceMeta is the W3C trace context of ctx's span for a request's _meta
// (traceparent, and tracestate when set); nil without a sampled span.
func TraceMeta(ctx context.Context) map[string]any {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return nil
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	if len(c) == 0 {
		return nil
	}
	out := make(map[string]any, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out
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
