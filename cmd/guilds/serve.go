package main

import (
	"context"
	"fmt"
	"io"

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
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: guilds serve (configured by environment; see README)")
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
	log := newLogger(stderr)
	p, err := openPlatform(ctx, cfg, log, false)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	defer p.close()
	if err := p.startConnectors(ctx); err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	srv, err := p.apiServer(ctx)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	log.Info("api listening", "addr", cfg.HTTPAddr)
	if err := srv.Serve(ctx, cfg.HTTPAddr); err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	return 0
}

func workerCommand(ctx context.Context, args []string, _ io.Reader, _ io.Writer, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintln(stderr, "usage: guilds worker (configured by environment; see README)")
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
	log := newLogger(stderr)
	p, err := openPlatform(ctx, cfg, log, false)
	if err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	defer p.close()
	if err := p.startConnectors(ctx); err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	if err := worker.Run(ctx, p.temporal, log, p.registrations()...); err != nil {
		fmt.Fprintln(stderr, "guilds:", err)
		return 1
	}
	return 0
}
