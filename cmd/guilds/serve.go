package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/worker"
)

func loadConfig(stderr io.Writer) (config.Config, bool) {
	cfg, err := config.Load(nil)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return cfg, false
	}
	return cfg, true
}

func serveCommand(ctx context.Context, args []string, _ io.Reader, _ io.Writer, stderr io.Writer) int {
	return runService(ctx, "serve", args, stderr, func(p *platform) error {
		srv, err := p.apiServer(ctx)
		if err != nil {
			return err
		}
		// The operator app links a run to its workflow in the Temporal UI.
		if ui := strings.TrimRight(os.Getenv("GUILDS_TEMPORAL_UI_URL"), "/"); ui != "" {
			srv.TemporalUI = ui + "/namespaces/" + p.cfg.TemporalNS + "/workflows/"
		}
		p.log.Info("api listening", "addr", p.cfg.HTTPAddr)
		return srv.Serve(ctx, p.cfg.HTTPAddr)
	})
}

func workerCommand(ctx context.Context, args []string, _ io.Reader, _ io.Writer, stderr io.Writer) int {
	return runService(ctx, "worker", args, stderr, func(p *platform) error {
		// The listener answers /healthz (and /readyz: not yet) from the start.
		ln, err := listenWorkerHTTP(p.env, p.log)
		if err != nil {
			return err
		}
		wh := newWorkerHTTP(map[string]func(context.Context) error{
			"postgres": p.db.Ping,
			"temporal": func(ctx context.Context) error { _, err := p.temporal.CheckHealth(ctx, nil); return err },
		})
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		served := make(chan error, 1)
		if ln != nil {
			p.log.Info("worker metrics listening", "addr", ln.Addr().String())
			go func() { served <- wh.serve(ctx, ln) }()
		} else {
			served <- nil
		}
		stop, err := p.startWorkspaces(ctx)
		if err != nil {
			return err
		}
		defer stop()
		go p.reportHealth(ctx)
		go p.reconcileSchedules(ctx)
		log := slog.New(startedHandler{Handler: p.log.Handler(), w: wh})
		err = worker.RunWith(ctx, p.temporal, log, p.reporter, p.workerLimits(), p.registrations()...)
		cancel()
		return errors.Join(err, <-served)
	})
}

// workerLimits sizes the worker from GUILDS_WORKER_* (config.Worker).
func (p *platform) workerLimits() worker.Limits {
	w := p.cfg.Worker
	return worker.Limits{MaxActivities: w.MaxActivities, MaxWorkflowTasks: w.MaxWorkflowTasks,
		ActivityPollers: w.ActivityPollers, WorkflowPollers: w.WorkflowPollers}
}

// runService starts a production process: configuration from the environment,
// an existing Temporal server, the platform's services, then serve until ctx ends.
func runService(ctx context.Context, name string, args []string, stderr io.Writer, serve func(*platform) error) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "usage: guilds %s (configured by environment; see README)\n", name)
		return 2
	}
	cfg, ok := loadConfig(stderr)
	if !ok {
		return 2
	}
	if cfg.TemporalAddress == "" {
		fmt.Fprintln(stderr, "guilds: set TEMPORAL_ADDRESS (e.g. 127.0.0.1:7233); only `guilds dev` starts its own Temporal server")
		return 2
	}
	p, err := openPlatform(ctx, cfg, newLogger(stderr), false)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	defer p.close()
	// Also here, not only in `migrate up`: a binary upgraded without
	// re-running migrate still brings its new catalog rows and native tools.
	if err := p.seed(ctx); err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	if err := p.startConnectors(ctx); err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	if err := serve(p); err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	return 0
}
