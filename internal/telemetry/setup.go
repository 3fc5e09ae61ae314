package telemetry

import (
	"context"
	"errors"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	temporalotel "go.temporal.io/sdk/contrib/opentelemetry"
	"go.temporal.io/sdk/interceptor"
)

// captureContent is GUILDS_OTEL_CAPTURE_CONTENT of the running process.
var captureContent atomic.Bool

// Telemetry is the process's tracer provider; a nil or disabled one is off.
type Telemetry struct {
	tp *sdktrace.TracerProvider
}

// Setup starts exporting traces as cfg asks and installs the global tracer
// provider and propagators; with no endpoint it changes nothing and returns
// an off Telemetry.
func Setup(ctx context.Context, cfg Config, version string) (*Telemetry, error) {
	captureContent.Store(cfg.CaptureContent)
	if !cfg.Enabled() {
		return &Telemetry{}, nil
	}
	exp, err := exporter(ctx, cfg)
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName(cfg.ServiceName), semconv.ServiceVersion(version)))
	if err != nil && !errors.Is(err, resource.ErrSchemaURLConflict) {
		return nil, err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	Install(tp)
	return &Telemetry{tp: tp}, nil
}

// Install makes tp the global tracer provider and W3C trace context and
// baggage the propagators (tests install an in-memory provider this way).
func Install(tp trace.TracerProvider) {
	_, off := tp.(noop.TracerProvider)
	tracing.Store(!off)
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
}

// SetCaptureContent turns the recording of redacted arguments and results on or off.
func SetCaptureContent(on bool) { captureContent.Store(on) }

func exporter(ctx context.Context, cfg Config) (*otlptrace.Exporter, error) {
	if cfg.Protocol == ProtocolGRPC {
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpointURL(cfg.Endpoint), otlptracegrpc.WithTimeout(cfg.Timeout)}
		if len(cfg.Headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(cfg.Headers))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(cfg.Endpoint), otlptracehttp.WithTimeout(cfg.Timeout)}
	if len(cfg.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(cfg.Headers))
	}
	return otlptracehttp.New(ctx, opts...)
}

// Enabled reports whether this process exports traces.
func (t *Telemetry) Enabled() bool { return t != nil && t.tp != nil }

// TemporalInterceptor is Temporal's OpenTelemetry interceptor on this
// provider, for the client's options (workers made from that client use it
// too); nil when tracing is off.
func (t *Telemetry) TemporalInterceptor() (interceptor.Interceptor, error) {
	if !t.Enabled() {
		return nil, nil
	}
	return temporalotel.NewTracingInterceptor(temporalotel.TracerOptions{Tracer: t.tp.Tracer("go.temporal.io/sdk"),
		TextMapPropagator: otel.GetTextMapPropagator()})
}

// Shutdown exports the spans still buffered.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if !t.Enabled() {
		return nil
	}
	return t.tp.Shutdown(ctx)
}

// Reset puts back the no-op provider and turns capture off (tests).
func Reset() {
	captureContent.Store(false)
	tracing.Store(false)
	otel.SetTracerProvider(noop.NewTracerProvider())
}
