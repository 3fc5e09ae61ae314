package main

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.temporal.io/sdk/worker"

	acts "github.com/guilds/guilds/activities/connect"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/workflows/connect"
)

// connectorRuntime is the remote MCP side of one process: the connector
// engine, the session pool and the connect activities. The platform builds
// one and hands its parts to the API (api.MCPDeps) and the worker
// (registration). It lives in main, not beside the connect workflow, so that
// workflows hold no engine or session (internal/layers).
type connectorRuntime struct {
	Engine *connectors.Engine
	Pool   *mcppool.Pool
	// Adapters serves the logins of local adapters (calls, checks, Drive's
	// folder routes) with the same HTTP client and resolver as the pool.
	Adapters *host.Host
	// HTTP carries every request to a remote MCP server (sessions and key
	// checks): each dialled address and redirect is checked against the
	// outbound policy, so a server cannot steer the platform to an internal one.
	HTTP       *http.Client
	Keyring    *secret.Keyring
	Activities *acts.Activities
}

// newConnectorRuntime builds the runtime. keys may be nil when connectors are not in
// use; getenv nil means os.Getenv (GUILDS_OAUTH_ALLOW_PRIVATE, GUILDS_CONNECTORS).
func newConnectorRuntime(ctx context.Context, db *pgxpool.Pool, rdb *redis.Client, keys *secret.Keyring, log *slog.Logger, getenv func(string) string) (*connectorRuntime, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	// Every catalog entry of the manifest is a connector in use: the engine loads
	// its providers and the catalog from PostgreSQL at start-up.
	manifests, err := grants.Manifests()
	if err != nil {
		return nil, err
	}
	refs := make([]connectors.Ref, 0, len(manifests))
	for _, m := range manifests {
		refs = append(refs, connectors.RefFromConfig(*m.Slug, m.Config))
	}
	policy := mcpoauth.PolicyFromEnv(getenv)
	// Token, refresh, revoke and provider checks go through the same policy as
	// MCP sessions: every dial and redirect is checked, so an endpoint from
	// remote metadata or the catalog cannot reach a private or metadata address.
	eng, err := connectors.New(ctx, connectors.Options{DB: db, Redis: rdb, Keyring: keys, Logger: log, Getenv: getenv,
		Connectors: refs, HTTPClient: policy.Client(30 * time.Second)})
	if err != nil {
		return nil, err
	}
	hc := policy.Client(0) // no global timeout: each MCP request carries its own deadline
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: eng.Resolver(), Log: log, HTTPClient: hc})
	adapters := host.New(host.Options{DB: db, Credentials: eng.Resolver(), Log: log, HTTP: hc})
	return &connectorRuntime{Engine: eng, Pool: pool, Adapters: adapters, HTTP: hc, Keyring: keys, Activities: &acts.Activities{
		DB: db, Engine: eng, Keyring: keys, Pool: pool, Adapters: adapters, Log: log,
		Discoverer: &mcpoauth.Discoverer{Policy: policy},
	}}, nil
}

// registration registers the connect workflow and activities on a worker.
func (r *connectorRuntime) registration() func(worker.Registry) {
	return func(w worker.Registry) { connect.Register(w, r.Activities) }
}

// Close ends the pool's sessions and the engine's background work.
func (r *connectorRuntime) Close() {
	r.Pool.Close()
	r.Engine.Close()
}
