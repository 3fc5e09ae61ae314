package main

import (
	"context"
	"strconv"
	"time"

	auditpruneact "github.com/guilds/guilds/activities/auditprune"
	schedact "github.com/guilds/guilds/activities/schedule"
	"github.com/guilds/guilds/internal/auditotel"
	"github.com/guilds/guilds/internal/native"
	"github.com/guilds/guilds/internal/schedules"
	"github.com/guilds/guilds/internal/telemetry"
	"github.com/guilds/guilds/worker"
	"github.com/guilds/guilds/workflows/auditprune"
	"github.com/guilds/guilds/workflows/schedule"
)

// scheduleManager keeps schedules' rows and Temporal sides together; the
// schedule tools act through it. GUILDS_MAX_SCHEDULES_PER_AGENT bounds an
// agent's schedules (default 20).
func (p *platform) scheduleManager() *schedule.Manager {
	max := schedules.DefaultMaxPerAgent
	if v := p.env.Getenv("GUILDS_MAX_SCHEDULES_PER_AGENT"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			max = n
		} else {
			p.log.Warn("GUILDS_MAX_SCHEDULES_PER_AGENT must be a positive number; the default applies", "value", v, "default", max)
		}
	}
	return &schedule.Manager{Temporal: p.temporal, MaxPerAgent: max, Log: p.log}
}

// scheduleOptions wires the schedule tools; a process without Temporal
// declares them and a call says why it cannot run.
func (p *platform) scheduleOptions() []native.Option {
	if p.temporal == nil {
		return nil
	}
	return []native.Option{native.WithSchedules(p.scheduleManager())}
}

// scheduleRegistration is the schedule workflows and their activities.
func (p *platform) scheduleRegistration() worker.Registration {
	return schedule.Registration(schedact.New(schedact.Deps{DB: p.db, Models: p.models, Log: p.log}))
}

// auditPruneRegistration is the daily audit prune, keeping
// GUILDS_AUDIT_RETENTION_DAYS of events.
func (p *platform) auditPruneRegistration() worker.Registration {
	return auditprune.Registration(&auditpruneact.Activities{DB: p.db, Retention: p.cfg.AuditRetention(), Log: p.log})
}

// auditForwardInterval is how often a worker sends the trail's new events
// to the OTLP logs endpoint, when one is configured.
const auditForwardInterval = 5 * time.Second

// forwardAudit sends the audit trail as OpenTelemetry log records until ctx
// ends, when OTEL_EXPORTER_OTLP_LOGS_ENDPOINT (or the OTLP endpoint) is set.
func (p *platform) forwardAudit(ctx context.Context) {
	headers, err := telemetry.ConfigFromEnv(p.env.Getenv)
	if err != nil {
		return // the telemetry's own start refused it already
	}
	cfg, err := auditotel.ConfigFromEnv(p.env.Getenv, headers.Headers)
	if err != nil {
		p.log.Error("audit: events are not forwarded to OpenTelemetry", "err", err)
		return
	}
	if !cfg.Enabled() {
		return
	}
	f, err := auditotel.New(ctx, p.db, cfg, p.log)
	if err != nil {
		p.log.Error("audit: events are not forwarded to OpenTelemetry", "err", err)
		return
	}
	defer func() { _ = f.Close(context.WithoutCancel(ctx)) }()
	f.Run(ctx, auditForwardInterval)
}

// reconcileInterval is how often a worker puts Temporal in step with the
// schedules table after doing it at start.
const reconcileInterval = 5 * time.Minute

// reconcileSchedules runs until ctx ends; a worker starts it.
func (p *platform) reconcileSchedules(ctx context.Context) {
	if p.temporal == nil {
		return
	}
	if err := auditprune.EnsureSchedule(ctx, p.temporal, worker.TaskQueue); err != nil {
		p.log.Error("audit: cannot create the daily prune's schedule; old events stay until a worker starts with Temporal reachable", "err", err)
	}
	go p.forwardAudit(ctx)
	p.scheduleManager().ReconcileEvery(ctx, p.db, reconcileInterval)
}
