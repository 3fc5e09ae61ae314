package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/worker"
	runwf "github.com/guilds/guilds/workflows/run"
)

// platform is the dependency graph shared by serve, worker and dev.
type platform struct {
	cfg          config.Config
	log          *slog.Logger
	db           *pgxpool.Pool
	redis        *redis.Client
	temporal     client.Client
	integrations *integrations.Registry
}

func newLogger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if os.Getenv("GUILDS_LOG_LEVEL") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// connect opens PostgreSQL, Redis and (when an address is known) Temporal.
func connect(ctx context.Context, cfg config.Config, log *slog.Logger) (*platform, error) {
	p := &platform{cfg: cfg, log: log, integrations: integrations.New(nil)}
	db, err := store.Open(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	p.db = db
	opt, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		p.close()
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	p.redis = redis.NewClient(opt)
	if err := p.redis.Ping(ctx).Err(); err != nil {
		p.close()
		return nil, fmt.Errorf("Redis at %s is not reachable (set REDIS_URL): %w", opt.Addr, err)
	}
	if cfg.TemporalAddress != "" {
		c, err := client.DialContext(ctx, client.Options{
			HostPort:  cfg.TemporalAddress,
			Namespace: cfg.TemporalNS,
			Logger:    sdklog.NewStructuredLogger(log.With("component", "temporal")),
		})
		if err != nil {
			p.close()
			return nil, fmt.Errorf("Temporal at %s is not reachable (set TEMPORAL_ADDRESS): %w", cfg.TemporalAddress, err)
		}
		p.temporal = c
	}
	return p, nil
}

func (p *platform) close() {
	if p.temporal != nil {
		p.temporal.Close()
	}
	if p.redis != nil {
		p.redis.Close()
	}
	if p.db != nil {
		p.db.Close()
	}
}

// apiServer builds the HTTP API on the platform's dependencies.
func (p *platform) apiServer(ctx context.Context) (*api.Server, error) {
	d := api.Deps{
		DB: p.db, Redis: p.redis, Temporal: p.temporal, Integrations: p.integrations,
		Log: p.log, AuthMode: p.cfg.AuthMode, PublicBaseURL: p.cfg.PublicBaseURL,
		Models: models.FromEnv(p.integrations, nil, os.Getenv),
	}
	if p.cfg.AuthMode == "local" {
		u, err := access.LocalUser(ctx, p.db)
		if err != nil {
			return nil, err
		}
		d.LocalUserID = u.ID
	}
	return api.New(d), nil
}

// registrations lists what the worker runs; each workflow package adds its own.
func (p *platform) registrations() []worker.Registration {
	return []worker.Registration{runwf.Registration(runact.New(runact.Deps{DB: p.db, Models: models.FromEnv(p.integrations, nil, os.Getenv), Log: p.log}))}
}

// seed writes the rows the platform needs at boot; it is idempotent.
func (p *platform) seed(ctx context.Context) error {
	if err := grants.Seed(ctx, p.db); err != nil {
		return err
	}
	return nil
}
