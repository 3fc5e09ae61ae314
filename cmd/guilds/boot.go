package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
	sdklog "go.temporal.io/sdk/log"

	ghacts "github.com/guilds/guilds/activities/githubinstall"
	groupact "github.com/guilds/guilds/activities/group"
	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/api"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/errorreport"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/groupchat"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/native"
	grouptools "github.com/guilds/guilds/internal/native/group"
	"github.com/guilds/guilds/internal/native/websearch"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/payloadcodec"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/telemetry"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
	"github.com/guilds/guilds/worker"
	"github.com/guilds/guilds/workflows/githubinstall"
	groupwf "github.com/guilds/guilds/workflows/group"
	runwf "github.com/guilds/guilds/workflows/run"
)

// platform is the dependency graph shared by serve, worker and dev.
type platform struct {
	cfg          config.Config
	env          environment // the environment at start-up; the live one lost its credentials
	log          *slog.Logger
	db           *pgxpool.Pool
	redis        *redis.Client
	temporal     client.Client
	integrations *integrations.Registry
	keyring      *secret.Keyring
	codec        *payloadcodec.Codec // Temporal payloads: opened always, sealed with GUILDS_TEMPORAL_CODEC=encrypt
	models       *models.Resolver
	tools        *tools.Registry // native tool implementations
	workspace    *workspaceSlot  // the code tools' workspaces: filled by the worker (workspaces.go)
	grants       *grants.Service
	connectors   *connectorRuntime     // connector engine, MCP pool and connect workflow
	reporter     *errorreport.Reporter // SENTRY_DSN; nil is off
	telemetry    *telemetry.Telemetry  // OTEL_*: traces off unless an endpoint is named
	github       githubSlot            // coding generations' GitHub repositories (the App's tokens)
}

// githubSlot holds the one githubapp.Generations of the process: it keeps
// the tokens it issued for the runs' redaction set.
type githubSlot struct {
	once sync.Once
	g    *githubapp.Generations
}

// gitHubGenerations is the process's githubapp.Generations; nil when the box
// has no GitHub App (no repository gets a token then).
func (p *platform) gitHubGenerations() *githubapp.Generations {
	p.github.once.Do(func() {
		if !p.integrations.On(githubapp.Integration) {
			return
		}
		if p.workspace == nil {
			p.workspace = &workspaceSlot{}
		}
		helper := ""
		if p.cfg.Sandbox.Driver == config.SandboxLocal {
			helper = hostBinary("guilds-git-credential")
		}
		p.github.g = &githubapp.Generations{DB: p.db, Workspace: p.workspace, Helper: helper, Keyring: p.keyring, Log: p.log,
			Egress: p.workspace, // the worker's GitHub proxy, once startWorkspaces filled the slot
			App: func() (*githubapp.Client, error) {
				cfg, err := githubapp.FromRegistry(p.integrations)
				return &githubapp.Client{Config: cfg}, err
			}}
	})
	return p.github.g
}

// gitWorkspace is the agents' workspace whose shell calls first open the
// agent's way to GitHub again and replace the generation's GitHub tokens
// when they are close to their expiry.
type gitWorkspace struct {
	*workspaceSlot
	g  *githubapp.Generations
	db *pgxpool.Pool
}

func (w gitWorkspace) BeforeShell(ctx context.Context, agentID string) error {
	return w.g.BeforeShell(ctx, agentID, func(ctx context.Context) (githubapp.Agent, error) {
		a, err := orgs.LoadAgent(ctx, w.db, agentID)
		if err != nil {
			return githubapp.Agent{}, err
		}
		return githubapp.Agent{ID: a.ID, GuildID: a.GuildID, OrgID: a.OrganisationID}, nil
	})
}

// hostBinary finds one of the sandbox helpers beside this binary, else on
// PATH, for the local driver whose commands run on this host; "" when absent.
func hostBinary(name string) string {
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return ""
}

func newLogger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if os.Getenv("GUILDS_LOG_LEVEL") == "debug" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level}))
}

// openPlatform opens PostgreSQL, Redis and (when an address is known) Temporal, and
// builds the services every process shares. dev allows a generated key under
// the data directory when GUILDS_ENCRYPTION_KEY is unset.
func openPlatform(ctx context.Context, cfg config.Config, log *slog.Logger, dev bool) (*platform, error) {
	env := snapshotEnvironment()
	p := &platform{cfg: cfg, env: env, log: log, integrations: integrations.New(env.Getenv)}
	db, err := store.Open(ctx, cfg.PoolURL()) // GUILDS_DB_MAX_CONNS
	if err != nil {
		return nil, err
	}
	p.db = db
	opt, err := redis.ParseURL(cfg.RedisURL)
	if err != nil {
		p.close()
		// A parse error quotes the whole URL, password included.
		return nil, fmt.Errorf("REDIS_URL %s: %s", config.Redact(cfg.RedisURL), config.RedactWith(err.Error(), cfg.RedisURL))
	}
	p.redis = redis.NewClient(opt)
	if err := p.redis.Ping(ctx).Err(); err != nil {
		p.close()
		return nil, fmt.Errorf("cannot reach Redis at %s (set REDIS_URL): %s", config.Redact(cfg.RedisURL), config.RedactWith(err.Error(), opt.Password))
	}
	if p.keyring, err = platformKeyring(cfg, dev); err != nil {
		p.close()
		return nil, err
	}
	if p.telemetry, err = startTelemetry(ctx, env); err != nil {
		p.close()
		return nil, err
	}
	// Read everything it needs: from here on, children never inherit them.
	forgetCredentials(env)
	warnUnknownKeys(ctx, db, p.keyring, log)
	p.codec = payloadcodec.New(p.keyring, cfg.SealPayloads)
	if cfg.TemporalAddress != "" {
		dc, fc := p.codec.Converters()
		opts := client.Options{
			HostPort:         cfg.TemporalAddress,
			Namespace:        cfg.TemporalNS,
			Logger:           sdklog.NewStructuredLogger(log.With("component", "temporal")),
			DataConverter:    dc,
			FailureConverter: fc,
		}
		// Temporal's workflow and activity spans; workers made from this client trace too.
		if ic, err := p.telemetry.TemporalInterceptor(); err != nil {
			p.close()
			return nil, err
		} else if ic != nil {
			opts.Interceptors = []interceptor.ClientInterceptor{ic}
		}
		c, err := dialTemporal(ctx, opts, log)
		if err != nil {
			p.close()
			return nil, err
		}
		p.temporal = c
		if err := ensureSearchAttributes(ctx, c, cfg.TemporalNS); err != nil {
			p.close()
			return nil, err
		}
	}
	if p.reporter, err = errorreport.FromIntegrations(p.integrations, append(p.integrations.Secrets(), cfg.EncryptionKey), version, log); err != nil {
		p.close()
		return nil, err
	}
	p.models = models.FromEnv(p.integrations, p.keyring, env.Getenv)
	codeOpts := p.codeOptions()
	if g := p.gitHubGenerations(); g != nil {
		codeOpts = append(codeOpts, native.WithWorkspace(gitWorkspace{workspaceSlot: p.workspace, g: g, db: db}))
	}
	p.tools = native.Registry(db, log, append(append(append(codeOpts, p.scheduleOptions()...), p.secretOptions()...),
		native.WithGroupChat(p.groupChat(), lazySecrets{p}), native.WithGroupLimits(p.groupLimits()))...)
	p.grants = grants.NewService(p.tools, p.integrations, log)
	return p, nil
}

// slotFiles is the workspace slot with the file API's read, for the tools
// that move files between a workspace and a service (workspacefiles); like
// the code tools it fails outside the worker.
type slotFiles struct{ *workspaceSlot }

func (s slotFiles) CopyFrom(ctx context.Context, agentID, path string) (sandbox.File, error) {
	m, err := s.manager()
	if err != nil {
		return sandbox.File{}, err
	}
	return m.CopyFrom(ctx, agentID, path)
}

// secretOptions give the secret tools the keyring and tavily_search the
// box's key (through the integrations registry) and GUILDS_TAVILY_BASE_URL.
func (p *platform) secretOptions() []native.Option {
	return []native.Option{
		native.WithKeyring(p.keyring),
		native.WithWebSearch(func() string { return p.integrations.Value(websearch.Integration, websearch.KeyVariable) },
			p.env.Getenv("GUILDS_TAVILY_BASE_URL")),
	}
}

// warnUnknownKeys names the key ids stored values are sealed under that the
// keyring lacks: those values fail (503 key_unavailable) until the key is back.
func warnUnknownKeys(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring, log *slog.Logger) {
	uses, err := sealedRegistry().UnknownKeyIDs(ctx, db, kr)
	if err != nil {
		log.Debug("key ids in the database not checked", "err", err)
		return
	}
	for _, u := range uses {
		log.Warn("stored values are sealed under a key GUILDS_ENCRYPTION_KEY lacks; put it back or they stay unreadable",
			"table", u.Table, "key_id", u.KeyID, "rows", u.Rows)
	}
}

// platformKeyring reads GUILDS_ENCRYPTION_KEY; in development it falls back to
// a key generated once under the data directory.
func platformKeyring(cfg config.Config, dev bool) (*secret.Keyring, error) {
	kr, err := loadKeyring(cfg)
	if errors.Is(err, secret.ErrNoKey) && dev {
		return secret.DevKeyring(cfg.DataDir)
	}
	if errors.Is(err, secret.ErrNoKey) {
		return nil, errors.New("set GUILDS_ENCRYPTION_KEY (kid:base64-32-bytes); credentials are encrypted at rest with it")
	}
	if err != nil {
		return nil, fmt.Errorf("GUILDS_ENCRYPTION_KEY: %w", err)
	}
	return kr, nil
}

// startConnectors starts the connector engine and the MCP pool.
func (p *platform) startConnectors(ctx context.Context) error {
	rt, err := newConnectorRuntime(ctx, p.db, p.redis, p.keyring, p.log, p.env.Getenv)
	if err != nil {
		return err
	}
	p.connectors = rt
	return nil
}

// startTelemetry reads the OTEL_* variables and starts exporting traces when
// they name an endpoint; the exporter's headers (a collector's key) then
// leave the live environment, as the other credentials do.
func startTelemetry(ctx context.Context, env environment) (*telemetry.Telemetry, error) {
	cfg, err := telemetry.ConfigFromEnv(env.Getenv)
	if err != nil {
		return nil, err
	}
	for _, name := range telemetry.HeaderVariables {
		_ = os.Unsetenv(name)
	}
	return telemetry.Setup(ctx, cfg, version)
}

func (p *platform) close() {
	p.reporter.Flush(2 * time.Second)
	if p.telemetry != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_ = p.telemetry.Shutdown(ctx) // the spans still buffered; a collector that is gone loses them
		cancel()
	}
	if p.connectors != nil {
		p.connectors.Close()
	}
	if p.temporal != nil {
		p.temporal.Close()
	}
	if p.redis != nil {
		_ = p.redis.Close()
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
		Models: p.models, Tools: p.tools, URLPolicy: mcpoauth.PolicyFromEnv(p.env.Getenv),
		Codec: p.codec, CodecWithoutToken: config.Loopback(p.cfg.HTTPAddr),
		RunEvents: runs.NewListener(p.db.Config().ConnConfig.Copy(), p.log),
		Reporter:  p.reporter, MaxAgentsPerOrg: p.cfg.Limits.MaxAgentsPerOrg,
	}
	if p.connectors != nil {
		d.MCP = api.MCPDeps{Engine: p.connectors.Engine, Pool: p.connectors.Pool, Adapters: p.connectors.Adapters, Keyring: p.keyring, KeyHTTP: p.connectors.HTTP}
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

// registrations lists what the worker runs: the run workflow and, with
// connectors started, the OAuth connect workflow.
func (p *platform) registrations() []worker.Registration {
	deps := runact.Deps{DB: p.db, Tools: p.tools, Offerer: runact.GrantsOfferer{S: p.grants}, Models: p.models, Log: p.log,
		Approvals: runact.PolicyGate{DB: p.db}}
	var regs []worker.Registration
	if p.connectors != nil {
		deps.MCP, deps.Adapters = p.connectors.Pool, p.connectors.Adapters
		deps.Credentials, deps.HTTP = p.connectors.Engine.Resolver(), p.connectors.HTTP
		deps.Offerer = runact.GrantsOfferer{S: p.grants, Lists: p.connectors.Pool}
		regs = append(regs, p.connectors.registration(), p.githubRegistration())
	}
	deps.Secrets = p.runSecrets()
	if g := p.gitHubGenerations(); g != nil {
		deps.Repositories = g
	}
	deps.Vault = agentsecrets.Vault{DB: p.db, Keyring: p.keyring}
	deps.Keyring = p.keyring
	deps.Files = slotFiles{p.workspace}
	deps.Breaker, deps.CallRate = p.callGuards()
	return append(regs, runwf.Registration(runact.New(deps)), p.scheduleRegistration(), p.groupRegistration(), p.auditPruneRegistration())
}

// githubRegistration is the GitHub App connect workflow and its activities;
// the App is read from the registry at each use, so a box without it still
// registers them (Connect is refused before any is scheduled).
func (p *platform) githubRegistration() worker.Registration {
	return githubinstall.Registration(&ghacts.Activities{DB: p.db, Keyring: p.keyring, Log: p.log,
		App: func() (*githubapp.Client, error) {
			cfg, err := githubapp.FromRegistry(p.integrations)
			return &githubapp.Client{Config: cfg}, err
		}})
}

// runSecrets is a run's redaction set: the box's keys, the organisation's
// model keys, the agent's granted secrets and, with connectors started,
// every credential its connections hold.
func (p *platform) runSecrets() runact.Secrets {
	secrets := runact.Secrets{
		runact.StaticSecrets(p.integrations.Secrets()),
		runact.ModelKeySecrets{DB: p.db, Keyring: p.keyring},
		agentsecrets.Source{DB: p.db, Keyring: p.keyring}, // every granted secret, from the moment it is stored
	}
	if p.connectors != nil {
		secrets = append(secrets, p.connectors.Engine)
	}
	if g := p.gitHubGenerations(); g != nil {
		secrets = append(secrets, g) // the installation tokens this process gave the agent's generations
	}
	return secrets
}

// lazySecrets reads runSecrets when a call needs it: group_post is built
// before the connectors start.
type lazySecrets struct{ p *platform }

func (l lazySecrets) RunSecrets(ctx context.Context, agentID string) ([]string, error) {
	return l.p.runSecrets().RunSecrets(ctx, agentID)
}

// groupChat posts chat messages and starts their routing; nil without Temporal.
func (p *platform) groupChat() grouptools.Poster {
	if p.temporal == nil {
		return nil
	}
	return groupwf.Service{DB: p.db, Temporal: p.temporal}
}

// groupRegistration is the chat routing workflow and its activities. With
// the group-routing integration on, its model (TYPESAFE_MODEL, endpoint
// GUILDS_TYPESAFE_BASE_URL) chooses recipients; otherwise the plain rule.
func (p *platform) groupRegistration() worker.Registration {
	var router *groupchat.Router
	if key := p.integrations.Value(groupchat.Integration, groupchat.KeyVariable); key != "" {
		router = &groupchat.Router{Key: key, Model: p.integrations.Value(groupchat.Integration, groupchat.ModelVariable),
			BaseURL: p.env.Getenv("GUILDS_TYPESAFE_BASE_URL")}
	}
	svc := groupwf.Service{DB: p.db, Temporal: p.temporal}
	return groupwf.Registration(groupact.New(groupact.Deps{DB: p.db, Decider: groupchat.Decider{Router: router, Limits: p.groupLimits(), Log: p.log},
		Models: p.models, Poster: svc, Secrets: p.runSecrets(), Log: p.log}))
}

// groupLimits are the group chat's bounds from GUILDS_GROUP_*.
func (p *platform) groupLimits() groupchat.Limits {
	g := p.cfg.Group
	return groupchat.Limits{RunsPerExchange: g.RunsPerExchange, PostsPerRun: g.PostsPerRun, AgentMessagesPerMinute: g.AgentMessagesPerMinute}
}

// seed writes the rows the platform needs at boot; it is idempotent.
func (p *platform) seed(ctx context.Context) error {
	return seed(ctx, p.db, p.tools)
}

// seedLock serialises seeding between processes starting at once (migrate up,
// serve and worker replicas): one transaction at a time rewrites the catalog.
const seedLock = 7165

// seed writes the connector catalog and the platform bindings of the native
// tools in one transaction, so that a replica never sees half a catalog and
// two replicas never interleave the delete-then-insert of a server's tools.
func seed(ctx context.Context, db *pgxpool.Pool, reg *tools.Registry) error {
	err := store.InTx(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", seedLock); err != nil {
			return err
		}
		return grants.Seed(ctx, tx, reg)
	})
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "42P01" { // undefined_table
		return errors.New("the database is not migrated: run `guilds migrate up` first")
	}
	if err != nil {
		return fmt.Errorf("seed the catalog and the native tools: %w", err)
	}
	return nil
}
