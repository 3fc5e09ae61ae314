package telemetry

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Protocols of the OTLP exporter (OTEL_EXPORTER_OTLP_PROTOCOL).
const (
	ProtocolHTTP = "http/protobuf"
	ProtocolGRPC = "grpc"
)

// HeaderVariables may hold a collector's key: the platform drops them from
// its live environment once read, so that no child process inherits them.
var HeaderVariables = []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"}

// Config is what the OTEL_* variables (and GUILDS_OTEL_CAPTURE_CONTENT) ask for.
type Config struct {
	// Endpoint is the traces endpoint: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as
	// given, else OTEL_EXPORTER_OTLP_ENDPOINT (with /v1/traces added for
	// http/protobuf). Empty: tracing is off.
	Endpoint string
	Protocol string
	// Headers are sent with every export (OTEL_EXPORTER_OTLP_HEADERS and the
	// traces variant); they may hold a collector's key and are never logged.
	Headers     map[string]string
	Timeout     time.Duration
	ServiceName string
	// CaptureContent records tool arguments and results, redacted.
	CaptureContent bool
}

// Enabled reports whether traces are exported.
func (c Config) Enabled() bool { return c.Endpoint != "" }

// ConfigFromEnv reads the standard variables; a bad value is an error naming it.
func ConfigFromEnv(getenv func(string) string) (Config, error) {
	c := Config{ServiceName: "guilds", Timeout: 10 * time.Second}
	if v := strings.TrimSpace(getenv("OTEL_SERVICE_NAME")); v != "" {
		c.ServiceName = v
	}
	if v := strings.TrimSpace(getenv("GUILDS_OTEL_CAPTURE_CONTENT")); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return c, fmt.Errorf("GUILDS_OTEL_CAPTURE_CONTENT: want 1 or 0, got %q", v)
		}
		c.CaptureContent = on
	}
	if off, _ := strconv.ParseBool(strings.TrimSpace(getenv("OTEL_SDK_DISABLED"))); off {
		return c, nil
	}
	switch v := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); v {
	case "", "otlp":
	case "none":
		return c, nil
	default:
		return c, fmt.Errorf("OTEL_TRACES_EXPORTER: only otlp and none are supported, got %q", v)
	}
	c.Protocol = first(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
	if c.Protocol == "" {
		c.Protocol = ProtocolHTTP
	}
	if c.Protocol != ProtocolHTTP && c.Protocol != ProtocolGRPC {
		return c, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL: want %s or %s, got %q", ProtocolHTTP, ProtocolGRPC, c.Protocol)
	}
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")); v != "" {
		c.Endpoint = v
	} else if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		c.Endpoint = v
		if c.Protocol == ProtocolHTTP {
			c.Endpoint = strings.TrimRight(v, "/") + "/v1/traces"
		}
	}
	if c.Endpoint == "" {
		return c, nil
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: want an http or https URL, got %q", redactURL(c.Endpoint))
	}
	if u.User != nil {
		return c, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT: put credentials in OTEL_EXPORTER_OTLP_HEADERS, not in the URL")
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		h, err := parseHeaders(getenv(name))
		if err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
		for k, v := range h {
			if c.Headers == nil {
				c.Headers = map[string]string{}
			}
			c.Headers[k] = v
		}
	}
	if v := first(getenv, "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT"); v != "" {
		ms, err := strconv.Atoi(v)
		if err != nil || ms <= 0 {
			return c, fmt.Errorf("OTEL_EXPORTER_OTLP_TIMEOUT: want milliseconds, got %q", v)
		}
		c.Timeout = time.Duration(ms) * time.Millisecond
	}
	return c, nil
}

func first(getenv func(string) string, names ...string) string {
	for _, n := range names {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			return v
		}
	}
	return ""
}

// parseHeaders reads "k1=v1,k2=v2" (values URL-encoded). An error never
// quotes a value.
func parseHeaders(s string) (map[string]string, error) {
	out := map[string]string{}
	for i, pair := range strings.Split(s, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		k, v, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("entry %d is not key=value", i+1)
		}
		dv, err := url.PathUnescape(strings.TrimSpace(v))
		if err != nil {
			return nil, fmt.Errorf("the value of %s is not URL-encoded", k)
		}
		out[k] = dv
	}
	return out, nil
}

func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(not a URL)"
	}
	if u.User == nil {
		return s
	}
	u.User = url.User("REDACTED")
	return u.String()
}
