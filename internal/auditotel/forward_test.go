package auditotel_test

import (
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/auditotel"
	"github.com/guilds/guilds/internal/testdb"
)

// record is one log record as an OTLP/HTTP collector decoded it.
type record struct {
	event string
	attrs map[string]string
	svc   string
}

// receiver is an OTLP/HTTP logs endpoint that decodes the protobuf export
// requests and hands over each record.
func receiver(t *testing.T) (*httptest.Server, <-chan record) {
	got := make(chan record, 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), 400)
				return
			}
			body = zr
		}
		raw, _ := io.ReadAll(body)
		var in collogspb.ExportLogsServiceRequest
		if r.URL.Path != "/v1/logs" || r.Header.Get("Content-Type") != "application/x-protobuf" || proto.Unmarshal(raw, &in) != nil {
			t.Errorf("bad export: %s %s %s", r.URL.Path, r.Header.Get("Content-Type"), raw)
			http.Error(w, "bad", 400)
			return
		}
		for _, rl := range in.ResourceLogs {
			svc := ""
			for _, a := range rl.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					svc = a.Value.GetStringValue()
				}
			}
			for _, sl := range rl.ScopeLogs {
				for _, lr := range sl.LogRecords {
					rec := record{event: lr.EventName, attrs: map[string]string{}, svc: svc}
					for _, a := range lr.Attributes {
						if s, ok := a.Value.Value.(*commonpb.AnyValue_StringValue); ok {
							rec.attrs[a.Key] = s.StringValue
						} else {
							rec.attrs[a.Key] = fmt.Sprint(a.Value.GetIntValue())
						}
					}
					got <- rec
				}
			}
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collogspb.ExportLogsServiceResponse{})
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv, got
}

// Each event the trail holds reaches the collector once, as a log record
// with its fields as attributes; events before the cursor are not sent
// again.
func TestEventsReachTheCollector(t *testing.T) {
	db := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, got := receiver(t)
	cfg, err := auditotel.ConfigFromEnv(envMap{"OTEL_EXPORTER_OTLP_ENDPOINT": srv.URL}.get, nil)
	if err != nil || cfg.Endpoint != srv.URL+"/v1/logs" {
		t.Fatalf("config %+v %v", cfg, err)
	}
	f, err := auditotel.New(ctx, db, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close(context.Background()) }()
	var org string
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('a', 'a') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	for i, tool := range []string{"wallet_send", "gmail_send", "note_get"} {
		if err := audit.Record(ctx, db, audit.Event{OrganisationID: org, Action: audit.ActionToolCall, Tool: tool, Outcome: "ok",
			RunID: "00000000-0000-0000-0000-000000000001", Seq: i + 1, DurationMS: 12, Actor: "agent:x"}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := f.Forward(ctx); err != nil || n != 3 {
		t.Fatalf("forwarded %d, %v", n, err)
	}
	for _, want := range []string{"wallet_send", "gmail_send", "note_get"} {
		select {
		case r := <-got:
			if r.event != "guilds.audit.tool_call" || r.attrs["guilds.audit.tool"] != want || r.attrs["guilds.audit.organisation_id"] != org ||
				r.attrs["guilds.audit.duration_ms"] != "12" || r.attrs["guilds.audit.actor"] != "agent:x" || r.svc != "guilds" {
				t.Fatalf("record %+v, want tool %s", r, want)
			}
		case <-ctx.Done():
			t.Fatalf("no record for %s", want)
		}
	}
	if n, err := f.Forward(ctx); err != nil || n != 0 {
		t.Fatalf("a second pass forwarded %d, %v", n, err)
	}
	if err := audit.Record(ctx, db, audit.Event{OrganisationID: org, Action: audit.ActionBinding, Tool: "x", Outcome: "off"}); err != nil {
		t.Fatal(err)
	}
	if n, err := f.Forward(ctx); err != nil || n != 1 || (<-got).event != "guilds.audit.binding" {
		t.Fatalf("the next event: %d, %v", n, err)
	}
}

func TestConfigFromEnv(t *testing.T) {
	for env, want := range map[string]string{
		"OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=http://c:4318/custom": "http://c:4318/custom",
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://c:4318/":            "http://c:4318/v1/logs",
		"OTEL_LOGS_EXPORTER=none":                               "",
		"":                                                      "",
	} {
		k, v, _ := cutEq(env)
		c, err := auditotel.ConfigFromEnv(envMap{k: v}.get, nil)
		if err != nil || c.Endpoint != want {
			t.Errorf("%s: %q %v", env, c.Endpoint, err)
		}
	}
	for _, env := range []string{"OTEL_LOGS_EXPORTER=console", "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT=c:4318"} {
		k, v, _ := cutEq(env)
		if _, err := auditotel.ConfigFromEnv(envMap{k: v}.get, nil); err == nil {
			t.Errorf("%s accepted", env)
		}
	}
}
