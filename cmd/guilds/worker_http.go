package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The worker's own listener: the tool calls, MCP requests, token refreshes
// and sandbox execs happen in the worker process, so their guilds_* metrics
// are only on its /metrics, beside /healthz and /readyz. `guilds serve` has
// these on the API; `guilds dev` runs both halves in one process, whose one
// registry the API's /metrics already serves, so it opens no second listener.
const (
	workerMetricsVar         = "GUILDS_WORKER_METRICS_ADDR"
	defaultWorkerMetricsAddr = "127.0.0.1:9464"
)

// workerStartedMessage is the line worker.RunWith logs once its Temporal
// worker polls: the worker's readiness.
const workerStartedMessage = "worker started"

// workerMetricsAddr is the listener's address from GUILDS_WORKER_METRICS_ADDR:
// unset = the default, "" or "off" = no listener. explicit says the operator
// chose it, so failing to listen there stops the worker; the default taken
// by another process only costs the listener.
func workerMetricsAddr(env environment) (addr string, explicit bool) {
	v, set := env[workerMetricsVar]
	if !set {
		return defaultWorkerMetricsAddr, false
	}
	v = strings.TrimSpace(v)
	if v == "" || strings.EqualFold(v, "off") {
		return "", true
	}
	return v, true
}

// workerHTTP serves the worker process's /metrics, /healthz and /readyz.
type workerHTTP struct {
	started chan struct{} // closed when the Temporal worker polls
	once    sync.Once
	// checks are the dependencies /readyz asks, by name; an error fails it.
	checks map[string]func(context.Context) error
}

func newWorkerHTTP(checks map[string]func(context.Context) error) *workerHTTP {
	return &workerHTTP{started: make(chan struct{}), checks: checks}
}

// markStarted makes /readyz answer from the checks.
func (w *workerHTTP) markStarted() { w.once.Do(func() { close(w.started) }) }

func (w *workerHTTP) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.Handler())
	mux.HandleFunc("GET /healthz", func(rw http.ResponseWriter, _ *http.Request) {
		writeJSON(rw, http.StatusOK, map[string]any{"status": "ok"})
	})
	mux.HandleFunc("GET /readyz", w.readyz)
	return mux
}

// readyz is 200 once the Temporal worker polls and every check passes. The
// listener may be reachable by more than the operator, so a failure is
// named, never quoted (an error can carry an address or a password).
func (w *workerHTTP) readyz(rw http.ResponseWriter, r *http.Request) {
	checks := map[string]string{}
	ready := true
	select {
	case <-w.started:
		checks["worker"] = "ok"
	default:
		checks["worker"] = "starting"
		ready = false
	}
	if ready {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		for name, check := range w.checks {
			if err := check(ctx); err != nil {
				checks[name] = "unreachable"
				ready = false
				continue
			}
			checks[name] = "ok"
		}
	}
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	writeJSON(rw, status, map[string]any{"ready": ready, "checks": checks})
}

func writeJSON(rw http.ResponseWriter, status int, v any) {
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	_ = json.NewEncoder(rw).Encode(v)
}

// listenWorkerHTTP binds the worker's listener as GUILDS_WORKER_METRICS_ADDR
// says; nil (and no error) when it is off, or when the default address is
// taken (logged: another worker on the host holds it).
func listenWorkerHTTP(env environment, log *slog.Logger) (net.Listener, error) {
	addr, explicit := workerMetricsAddr(env)
	if addr == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		if !explicit {
			log.Warn("worker metrics not served: the default address is taken (set "+workerMetricsVar+" to another address, or off)",
				"addr", addr, "err", err)
			return nil, nil
		}
		return nil, fmt.Errorf("cannot listen on %s (set %s): %w", addr, workerMetricsVar, err)
	}
	return ln, nil
}

// serve answers on ln until ctx ends, then shuts down.
func (w *workerHTTP) serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: w.handler(), ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	<-done
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// startedHandler passes every record on and tells w when worker.RunWith
// logs that its Temporal worker started, whatever the log level lets through.
type startedHandler struct {
	slog.Handler
	w *workerHTTP
}

func (h startedHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.Handler.Enabled(ctx, l)
}

func (h startedHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == workerStartedMessage {
		h.w.markStarted()
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h startedHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return startedHandler{h.Handler.WithAttrs(attrs), h.w}
}

func (h startedHandler) WithGroup(name string) slog.Handler {
	return startedHandler{h.Handler.WithGroup(name), h.w}
}
