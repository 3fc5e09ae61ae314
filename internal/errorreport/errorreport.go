// Package errorreport sends the platform's own errors and panics to Sentry
// when SENTRY_DSN is set (the error-reporting integration). An event carries
// an error's message, its stack and the ids it concerns (organisation, guild,
// agent, run); never a request, a tool's arguments or result, or a
// credential: every text is redacted before it leaves, and what the SDK would
// add on its own (request data, breadcrumbs, user, modules) is dropped.
package errorreport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/getsentry/sentry-go"

	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/tools"
)

// Integration is the box's integration that turns error reports on, and
// DSNVariable the variable it reads, through the integrations registry.
const (
	Integration = "error-reporting"
	DSNVariable = "SENTRY_DSN"
)

// FromIntegrations returns the reporter the box's integrations call for:
// nil (off) unless the error-reporting integration is on.
func FromIntegrations(reg *integrations.Registry, secrets []string, release string, log *slog.Logger) (*Reporter, error) {
	return New(reg.Value(Integration, DSNVariable), secrets, release, log)
}

// Tags name what an error concerns. Redactor, when set, is the redaction set
// of the run or login in play; it is applied besides the platform's own.
type Tags struct {
	Component string // api, worker, activity, workflow
	Org       string
	Guild     string
	Agent     string
	Run       string
	Redactor  *tools.Redactor
}

// Reporter sends events. A nil *Reporter is off: every method does nothing.
type Reporter struct {
	inFlight sync.WaitGroup // ErrorAsync sends not yet done
	client   *sentry.Client
	static   *tools.Redactor
	log      *slog.Logger
}

// New returns a reporter for dsn, or nil when dsn is empty. secrets are the
// platform's own values (instance keys, the encryption key…), redacted from
// every event.
func New(dsn string, secrets []string, release string, log *slog.Logger) (*Reporter, error) {
	if dsn == "" {
		return nil, nil
	}
	if log == nil {
		log = slog.Default()
	}
	r := &Reporter{static: tools.NewRedactor(secrets, log), log: log}
	// Sent synchronously, within sendTimeout: the platform's own errors are
	// rare, and an event queued behind a buffer can be lost when the process
	// ends or the buffer is flushed before it was taken.
	transport := sentry.NewHTTPSyncTransport()
	transport.Timeout = sendTimeout
	c, err := sentry.NewClient(sentry.ClientOptions{
		Dsn:              dsn,
		Transport:        transport,
		Release:          release,
		AttachStacktrace: true,
		SendDefaultPII:   false,
		// The default integrations add the module list and the process
		// environment's context; an event carries only what Report adds.
		Integrations: func([]sentry.Integration) []sentry.Integration { return nil },
		BeforeSend:   r.beforeSend,
	})
	if err != nil {
		// The DSN's text is a credential of its own: never echo it.
		return nil, errors.New("SENTRY_DSN is not a valid Sentry DSN")
	}
	r.client = c
	return r, nil
}

// sendTimeout bounds how long reporting one error can hold its caller.
const sendTimeout = 5 * time.Second

type tagsKey struct{}

// Error reports err with tags.
func (r *Reporter) Error(ctx context.Context, err error, tags Tags) {
	if r == nil || err == nil {
		return
	}
	r.capture(ctx, err, tags, sentry.LevelError)
}

// ErrorAsync reports err without blocking the caller (a workflow task must
// not block); Flush waits for it.
func (r *Reporter) ErrorAsync(ctx context.Context, err error, tags Tags) {
	if r == nil || err == nil {
		return
	}
	r.inFlight.Add(1)
	go func() {
		defer r.inFlight.Done()
		r.capture(ctx, err, tags, sentry.LevelError)
	}()
}

// Panic reports a recovered panic value with tags.
func (r *Reporter) Panic(ctx context.Context, v any, tags Tags) {
	if r == nil {
		return
	}
	err, ok := v.(error)
	if !ok {
		err = fmt.Errorf("panic: %v", v)
	}
	r.capture(ctx, err, tags, sentry.LevelFatal)
}

func (r *Reporter) capture(ctx context.Context, err error, tags Tags, level sentry.Level) {
	scope := sentry.NewScope()
	scope.SetLevel(level)
	for k, v := range map[string]string{"component": tags.Component, "organisation_id": tags.Org,
		"guild_id": tags.Guild, "agent_id": tags.Agent, "run_id": tags.Run} {
		if v != "" {
			scope.SetTag(k, v)
		}
	}
	hint := &sentry.EventHint{Context: context.WithValue(ctx, tagsKey{}, tags)}
	r.client.CaptureException(err, hint, scope)
}

// Flush waits up to timeout for the sends ErrorAsync started.
func (r *Reporter) Flush(timeout time.Duration) {
	if r == nil {
		return
	}
	done := make(chan struct{})
	go func() { r.inFlight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(timeout):
	}
	r.client.Flush(timeout)
}

// beforeSend keeps an event to its message, exceptions, level, tags and
// stack, each text redacted.
func (r *Reporter) beforeSend(ev *sentry.Event, hint *sentry.EventHint) *sentry.Event {
	var extra *tools.Redactor
	if hint != nil && hint.Context != nil {
		if t, ok := hint.Context.Value(tagsKey{}).(Tags); ok {
			extra = t.Redactor
		}
	}
	clean := func(s string) string {
		s = r.static.Redact(s)
		if extra != nil {
			s = extra.Redact(s)
		}
		return scrubPatterns(s)
	}
	ev.Message = clean(ev.Message)
	for i := range ev.Exception {
		ev.Exception[i].Value = clean(ev.Exception[i].Value)
		if st := ev.Exception[i].Stacktrace; st != nil {
			for j := range st.Frames {
				st.Frames[j].Vars = nil
			}
		}
	}
	for k, v := range ev.Tags {
		ev.Tags[k] = clean(v)
	}
	ev.Request = nil
	ev.Breadcrumbs = nil
	ev.User = sentry.User{}
	ev.Modules = nil
	ev.Contexts = nil
	ev.Threads = nil
	ev.Attachments = nil
	return ev
}
