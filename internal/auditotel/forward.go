// Package auditotel forwards the audit trail as OpenTelemetry log records
// over OTLP/HTTP, when a logs endpoint is configured. It reads committed
// events after a cursor kept in Postgres (audit_otel_cursor), so only what
// the trail holds is sent, each replica taking turns under the cursor's row
// lock, and a crash between the send and the cursor's commit sends again
// rather than losing events.
package auditotel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	otellog "go.opentelemetry.io/otel/log"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"

	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/store"
)

// Config is where the records go: OTEL_EXPORTER_OTLP_LOGS_ENDPOINT, else
// OTEL_EXPORTER_OTLP_ENDPOINT with /v1/logs; OTEL_LOGS_EXPORTER=none turns
// it off. Headers are the telemetry's (they may hold a collector's key).
type Config struct {
	Endpoint    string
	Headers     map[string]string
	ServiceName string
}

// Enabled reports whether events are forwarded.
func (c Config) Enabled() bool { return c.Endpoint != "" }

// ConfigFromEnv reads the logs endpoint; a bad value is an error naming it.
func ConfigFromEnv(getenv func(string) string, headers map[string]string) (Config, error) {
	c := Config{Headers: headers, ServiceName: "guilds"}
	switch v := strings.TrimSpace(getenv("OTEL_LOGS_EXPORTER")); v {
	case "", "otlp":
	case "none":
		return c, nil
	default:
		return c, fmt.Errorf("OTEL_LOGS_EXPORTER: only otlp and none are supported, got %q", v)
	}
	if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT")); v != "" {
		c.Endpoint = v
	} else if v := strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_ENDPOINT")); v != "" {
		c.Endpoint = strings.TrimRight(v, "/") + "/v1/logs"
	}
	if c.Endpoint != "" && !strings.HasPrefix(c.Endpoint, "http://") && !strings.HasPrefix(c.Endpoint, "https://") {
		return c, fmt.Errorf("the OTLP logs endpoint must be an http(s) URL, got %q", c.Endpoint)
	}
	return c, nil
}

// Forwarder sends the trail's new events as log records.
type Forwarder struct {
	db       *pgxpool.Pool
	provider *sdklog.LoggerProvider
	logger   otellog.Logger
	log      *slog.Logger
	// Batch is how many events one pass reads.
	Batch int
}

// New builds a forwarder exporting to the configured endpoint; each record
// is exported synchronously, before the cursor moves past it.
func New(ctx context.Context, db *pgxpool.Pool, c Config, log *slog.Logger) (*Forwarder, error) {
	if !c.Enabled() {
		return nil, errors.New("auditotel: no OTLP logs endpoint is configured")
	}
	exp, err := otlploghttp.New(ctx, otlploghttp.WithEndpointURL(c.Endpoint), otlploghttp.WithHeaders(c.Headers))
	if err != nil {
		return nil, fmt.Errorf("auditotel: %w", err)
	}
	res := resource.NewSchemaless(semconv.ServiceName(c.ServiceName))
	lp := sdklog.NewLoggerProvider(sdklog.WithProcessor(sdklog.NewSimpleProcessor(exp)), sdklog.WithResource(res))
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Forwarder{db: db, provider: lp, logger: lp.Logger("guilds/audit"), log: log, Batch: 500}, nil
}

// Close flushes and stops the exporter.
func (f *Forwarder) Close(ctx context.Context) error { return f.provider.Shutdown(ctx) }

// Forward sends every event past the cursor, a batch per transaction, and
// reports how many it sent. Another replica forwarding meanwhile makes it
// return 0 at once.
func (f *Forwarder) Forward(ctx context.Context) (int, error) {
	total := 0
	for {
		n, err := f.pass(ctx)
		total += n
		if err != nil || n < f.Batch {
			return total, err
		}
	}
}

func (f *Forwarder) pass(ctx context.Context) (int, error) {
	n := 0
	err := store.InTx(ctx, f.db, func(tx pgx.Tx) error {
		var last int64
		err := tx.QueryRow(ctx, `SELECT last_id FROM audit_otel_cursor WHERE id = 1 FOR UPDATE SKIP LOCKED`).Scan(&last)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // another replica is forwarding
		}
		if err != nil {
			return err
		}
		events, err := audit.Since(ctx, tx, last, f.Batch)
		if err != nil || len(events) == 0 {
			return err
		}
		for _, e := range events {
			f.logger.Emit(ctx, Record(e))
		}
		// The simple processor exported each record in Emit; a failed
		// export is reported by the provider's flush.
		if err := f.provider.ForceFlush(ctx); err != nil {
			return err
		}
		n = len(events)
		_, err = tx.Exec(ctx, `UPDATE audit_otel_cursor SET last_id = $1 WHERE id = 1`, events[len(events)-1].ID)
		return err
	})
	return n, err
}

// Run forwards every interval until ctx ends.
func (f *Forwarder) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if n, err := f.Forward(ctx); err != nil && ctx.Err() == nil {
			f.log.Warn("audit: forwarding to OpenTelemetry failed; retried at the next pass", "err", err)
		} else if n > 0 {
			f.log.Debug("audit: forwarded events", "events", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Record is one event as a log record: the event's time, the action as its
// event name and body, and every field that is set as an attribute named
// guilds.audit.<field>.
func Record(e audit.Event) otellog.Record {
	var r otellog.Record
	r.SetTimestamp(e.At)
	r.SetObservedTimestamp(time.Now())
	r.SetSeverity(otellog.SeverityInfo)
	r.SetSeverityText("INFO")
	r.SetEventName("guilds.audit." + e.Action)
	r.SetBody(attribute.StringValue(e.Action))
	attrs := []attribute.KeyValue{attribute.Int64("guilds.audit.id", e.ID), attribute.String("guilds.audit.action", e.Action)}
	for k, v := range map[string]string{"organisation_id": e.OrganisationID, "guild_id": e.GuildID, "agent_id": e.AgentID,
		"run_id": e.RunID, "trigger": e.Trigger, "tool": e.Tool, "kind": e.Kind, "connection_id": e.ConnectionID,
		"login_scope": e.LoginScope, "account_hint": e.AccountHint, "args_digest": e.ArgsDigest, "outcome": e.Outcome,
		"approval_id": e.ApprovalID, "actor": e.Actor} {
		if v != "" {
			attrs = append(attrs, attribute.String("guilds.audit."+k, v))
		}
	}
	for k, v := range map[string]int{"seq": e.Seq, "duration_ms": e.DurationMS, "result_bytes": e.ResultBytes} {
		if v != 0 {
			attrs = append(attrs, attribute.Int("guilds.audit."+k, v))
		}
	}
	r.AddAttributes(attrs...)
	return r
}
