package telemetry_test

import (
	"context"
	"maps"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/guilds/guilds/internal/telemetry"
)

func attrMap(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// TestSpanAttributes: the attributes a span gets when it ends are the
// conventions' (the helpers set them all at the end, in one call).
func TestSpanAttributes(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	telemetry.Install(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	t.Cleanup(telemetry.Reset)

	ctx, tool := telemetry.StartToolCall(context.Background(), "run-1", "notion_lookup", "call_1")
	mctx, req := telemetry.StartMCPRequest(ctx, "tools/call", "lookup")
	req.Session("notion", "stdio", "", "2025-11-25")
	meta := telemetry.TraceMeta(mctx)
	req.End(telemetry.ErrorToolError)
	tool.End("mcp", "mcp", "error")
	_, list := telemetry.StartMCPRequest(context.Background(), "tools/list", "")
	list.Session("notion", "http", "sid-1", "")
	list.End("")

	spans := rec.Ended()
	if len(spans) != 3 {
		t.Fatalf("%d spans ended, want 3", len(spans))
	}
	call, exec, listing := spans[0], spans[1], spans[2]
	want := map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "lookup", "gen_ai.operation.name": "execute_tool",
		"guilds.mcp.server": "notion", "network.transport": "pipe", "mcp.protocol.version": "2025-11-25", "error.type": "tool_error"}
	if got := attrMap(call.Attributes()); !maps.Equal(got, want) || call.Name() != "tools/call lookup" ||
		call.SpanKind() != trace.SpanKindClient || call.Status().Code != codes.Error || call.Parent().SpanID() != exec.SpanContext().SpanID() {
		t.Errorf("tools/call span %q kind %v status %v attributes %v", call.Name(), call.SpanKind(), call.Status(), got)
	}
	want = map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "notion_lookup", "gen_ai.tool.call.id": "call_1",
		"guilds.run.id": "run-1", "gen_ai.tool.type": "extension", "guilds.tool.class": "mcp", "guilds.tool.outcome": "error", "error.type": "error"}
	if got := attrMap(exec.Attributes()); !maps.Equal(got, want) || exec.Name() != "execute_tool notion_lookup" ||
		exec.SpanKind() != trace.SpanKindInternal || exec.Status().Code != codes.Error {
		t.Errorf("execute_tool span %q kind %v attributes %v", exec.Name(), exec.SpanKind(), got)
	}
	want = map[string]string{"mcp.method.name": "tools/list", "guilds.mcp.server": "notion", "network.transport": "tcp", "mcp.session.id": "sid-1"}
	if got := attrMap(listing.Attributes()); !maps.Equal(got, want) || listing.Name() != "tools/list" || listing.Status().Code != codes.Unset {
		t.Errorf("tools/list span %q attributes %v", listing.Name(), got)
	}
	wantMeta := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(trace.ContextWithSpanContext(context.Background(), call.SpanContext()), wantMeta)
	if len(meta) != 1 || meta["traceparent"] != wantMeta["traceparent"] {
		t.Errorf("_meta trace context %v, want %v", meta, wantMeta)
	}
}

// TestTraceMetaIsThePropagators: what goes in _meta is what the W3C
// propagator writes, tracestate and unsampled flags included.
func TestTraceMetaIsThePropagators(t *testing.T) {
	ts, err := trace.ParseTraceState("vendor=a,other=b")
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range []trace.SpanContext{
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5}, TraceFlags: trace.FlagsSampled}),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: [16]byte{9}, SpanID: [8]byte{8}, TraceState: ts, Remote: true}),
	} {
		ctx := trace.ContextWithSpanContext(context.Background(), sc)
		want := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(ctx, want)
		got := telemetry.TraceMeta(ctx)
		if len(got) != len(want) {
			t.Fatalf("TraceMeta = %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %v, want %q", k, got[k], v)
			}
		}
	}
	if m := telemetry.TraceMeta(context.Background()); m != nil {
		t.Errorf("no span context: %v", m)
	}
}

// TestTracingOffStartsNoSpan: with no provider that records, the helpers
// leave the context as it was, so a caller's trace context still reaches
// _meta, and record nothing.
func TestTracingOffStartsNoSpan(t *testing.T) {
	telemetry.Reset()
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: [16]byte{1}, SpanID: [8]byte{2}, TraceFlags: trace.FlagsSampled, Remote: true})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), parent)
	tctx, tool := telemetry.StartToolCall(ctx, "run", "notion_lookup", "call_1")
	mctx, req := telemetry.StartMCPRequest(tctx, "tools/call", "lookup")
	if !trace.SpanContextFromContext(mctx).Equal(parent) {
		t.Errorf("span context %v, want the caller's %v", trace.SpanContextFromContext(mctx), parent)
	}
	if m := telemetry.TraceMeta(mctx); m["traceparent"] != "00-01000000000000000000000000000000-0200000000000000-01" {
		t.Errorf("_meta %v", m)
	}
	req.Session("notion", "http", "sid", "v")
	req.End("")
	tool.Content("a", "b")
	tool.End("mcp", "mcp", "ok")
}
