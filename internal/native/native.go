// Package native assembles the registry of the native tools the platform
// implements, each family from its own package, wired to its grants.
package native

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/groupchat"
	"github.com/guilds/guilds/internal/native/browser"
	"github.com/guilds/guilds/internal/native/code"
	"github.com/guilds/guilds/internal/native/group"
	"github.com/guilds/guilds/internal/native/issues"
	"github.com/guilds/guilds/internal/native/memory"
	"github.com/guilds/guilds/internal/native/notes"
	"github.com/guilds/guilds/internal/native/records"
	schedtools "github.com/guilds/guilds/internal/native/schedules"
	"github.com/guilds/guilds/internal/native/scripts"
	"github.com/guilds/guilds/internal/native/secrets"
	"github.com/guilds/guilds/internal/native/websearch"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/sandbox"
)

// Option configures the registry.
type Option func(*options)

type options struct {
	browser   browser.Deps
	code      code.Deps
	scripts   scripts.Deps
	schedules schedtools.Manager
	keyring   *secret.Keyring
	websearch websearch.Deps
	group     group.Deps
}

// WithKeyring gives the secret tools the credential keyring: secret_store
// seals with it, and the code tools export the agent's granted secrets to
// its shell commands. Without it secret_store fails and shells get none.
func WithKeyring(kr *secret.Keyring) Option {
	return func(o *options) { o.keyring = kr }
}

// WithWebSearch gives tavily_search the box's key (read when a call runs)
// and Tavily's endpoint (GUILDS_TAVILY_BASE_URL; empty is Tavily's own).
func WithWebSearch(key func() string, baseURL string) Option {
	return func(o *options) { o.websearch.Key, o.websearch.BaseURL = key, baseURL }
}

// WithGroupChat gives group_post the poster that stores an agent's message
// and starts its routing, and the run's redaction set the message passes
// through first; without a poster a call says the process cannot route.
func WithGroupChat(poster group.Poster, secrets group.SecretSource) Option {
	return func(o *options) { o.group.Poster, o.group.Secrets = poster, secrets }
}

// WithGroupLimits sets group_post's cap per run and the guild's agent
// message rate (their defaults otherwise).
func WithGroupLimits(l groupchat.Limits) Option {
	return func(o *options) { o.group.Limits = l }
}

// WithSchedules gives the schedule tools the manager that keeps a
// schedule's row and its Temporal side together; without it a call says
// the process has no Temporal connection.
func WithSchedules(m schedtools.Manager) Option {
	return func(o *options) { o.schedules = m }
}

// WithWorkspace gives the code tools the agents' workspaces. Without it (the
// API server) they are declared, so offers and the Tools view list them, and
// a call fails with sandbox.ErrNoWorkspace.
func WithWorkspace(ws sandbox.Workspace) Option {
	return func(o *options) { o.code.Workspace, o.browser.Workspace, o.scripts.Workspace = ws, ws, ws }
}

// WithBrowserProxy gives the browser tools the platform's forward proxy,
// Chromium's only way out of a sandbox without a network.
func WithBrowserProxy(p browser.Proxy) Option {
	return func(o *options) { o.browser.Proxy = p }
}

// WithBrowserUser names the uid Chromium runs as in a sandbox ("" = the
// agent's, on the local driver), asked at each call.
func WithBrowserUser(user func() string) Option {
	return func(o *options) { o.browser.BrowserUser = user }
}

// WithCodeResultMax caps a code tool's result text (CODE_RESULT_MAX_BYTES);
// 0 keeps the helper's default.
func WithCodeResultMax(n int) Option {
	return func(o *options) { o.code.MaxResultBytes, o.scripts.MaxResultBytes = n, n }
}

// WithCodeHelper names the helper binary as the workspace sees it, for the
// local development driver; the default is codeproto.HelperPath.
func WithCodeHelper(path string) Option {
	return func(o *options) { o.code.Helper = path }
}

// Registry registers every native tool family on a new registry.
func Registry(db *pgxpool.Pool, log *slog.Logger, opts ...Option) *tools.Registry {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	reg := tools.NewRegistry(tools.WithLogger(log))
	notes.Register(reg, notes.Deps{DB: db, Log: log, Reach: noteReach})
	records.Register(reg, records.Deps{DB: db, Log: log})
	memory.Register(reg, memory.Deps{DB: db, Log: log})
	issues.Register(reg, db)
	schedtools.Register(reg, schedtools.Deps{DB: db, Log: log, Manager: o.schedules})
	o.code.Log = log
	sd := secrets.Deps{Keyring: o.keyring, Log: log}
	if db != nil {
		o.code.DB, sd.DB, o.scripts.DB, o.browser.DB = db, db, db, db
		if o.keyring != nil {
			o.code.Env = agentsecrets.Source{DB: db, Keyring: o.keyring}
			o.scripts.Env = o.code.Env
		}
	}
	code.Register(reg, o.code)
	o.scripts.Log = log
	scripts.Register(reg, o.scripts)
	o.browser.Log = log
	browser.Register(reg, o.browser)
	secrets.Register(reg, sd)
	websearch.Register(reg, o.websearch)
	o.group.Log = log
	if db != nil {
		o.group.DB = db
	}
	group.Register(reg, o.group)
	return reg
}

// noteReach takes a note tool's reach from the agent's artifact grants.
func noteReach(ctx context.Context, db store.DB, agentID string) (notes.Reach, error) {
	r, err := grants.ArtifactGrants(ctx, db, agentID)
	return notes.Reach(r), err
}
