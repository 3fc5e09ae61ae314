package telemetry

import (
	"strings"
	"testing"
)

func env(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestConfigFromEnv(t *testing.T) {
	for _, tc := range []struct {
		name     string
		getenv   func(string) string
		endpoint string
		protocol string
	}{
		{"nothing set: off", env(), "", ""},
		{"the base endpoint gets /v1/traces", env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"), "http://collector:4318/v1/traces", ProtocolHTTP},
		{"the traces endpoint is taken as given", env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://a:4318", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "https://b/traces"), "https://b/traces", ProtocolHTTP},
		{"grpc keeps the base endpoint", env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317", "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"), "http://collector:4317", ProtocolGRPC},
		{"OTEL_SDK_DISABLED wins", env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_SDK_DISABLED", "true"), "", ""},
		{"OTEL_TRACES_EXPORTER=none wins", env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_TRACES_EXPORTER", "none"), "", ""},
	} {
		c, err := ConfigFromEnv(tc.getenv)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.Endpoint != tc.endpoint || c.Enabled() != (tc.endpoint != "") || (tc.endpoint != "" && c.Protocol != tc.protocol) {
			t.Errorf("%s: endpoint %q protocol %q", tc.name, c.Endpoint, c.Protocol)
		}
	}
	c, err := ConfigFromEnv(env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20k-123,x-tenant=a",
		"OTEL_EXPORTER_OTLP_TIMEOUT", "2500", "OTEL_SERVICE_NAME", "guilds-worker", "GUILDS_OTEL_CAPTURE_CONTENT", "1"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Headers["authorization"] != "Bearer k-123" || c.Headers["x-tenant"] != "a" || c.Timeout.Milliseconds() != 2500 ||
		c.ServiceName != "guilds-worker" || !c.CaptureContent {
		t.Errorf("config %+v", c)
	}
}

// A bad value is refused with the variable's name, and never quoted when it
// may hold a credential.
func TestConfigFromEnvRefusesBadValues(t *testing.T) {
	for _, tc := range []struct {
		getenv func(string) string
		want   string
	}{
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "collector:4318"), "OTEL_EXPORTER_OTLP_ENDPOINT"},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://user:hunter2secret@c:4318"), "OTEL_EXPORTER_OTLP_HEADERS"},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"), "OTEL_EXPORTER_OTLP_PROTOCOL"},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_HEADERS", "hunter2secret"), "OTEL_EXPORTER_OTLP_HEADERS"},
		{env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318", "OTEL_EXPORTER_OTLP_TIMEOUT", "soon"), "OTEL_EXPORTER_OTLP_TIMEOUT"},
		{env("OTEL_TRACES_EXPORTER", "zipkin"), "OTEL_TRACES_EXPORTER"},
		{env("GUILDS_OTEL_CAPTURE_CONTENT", "yes please"), "GUILDS_OTEL_CAPTURE_CONTENT"},
	} {
		_, err := ConfigFromEnv(tc.getenv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error naming %s, got %v", tc.want, err)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("the error quotes a credential: %v", err)
		}
	}
}

func TestTruncateKeepsRunes(t *testing.T) {
	s := strings.Repeat("é", MaxContent) // 2 bytes each
	got := Truncate(s)
	if !strings.HasSuffix(got, "…[truncated]") || len(got) > MaxContent+len("…[truncated]") {
		t.Fatalf("len %d", len(got))
	}
	if strings.ContainsRune(strings.TrimSuffix(got, "…[truncated]"), '\uFFFD') {
		t.Fatal("cut inside a rune")
	}
}
