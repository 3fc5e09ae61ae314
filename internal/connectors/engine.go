package connectors

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/redis/go-redis/v9"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
)

// Timing holds the engine's durations; zero fields take the defaults.
type Timing struct {
	// Skew: a token this close to its expiry is never served (default 15s),
	// capped at a quarter of the token's lifetime when its issue time is
	// known, so a short-lived token is not refreshed on every lookup.
	Skew time.Duration
	// RefreshAhead: a token in use is refreshed in the background this long
	// before it expires (default 2m; negative disables).
	RefreshAhead time.Duration
	// Lease of the cross-replica refresh lock in Redis (default 15s). A holder
	// that dies stalls the refresh of that connection at most this long.
	Lease time.Duration
	// RefreshTimeout bounds one token request (default 10s, kept below Lease).
	RefreshTimeout time.Duration
	// WaitTimeout bounds how long a caller waits for another replica's
	// refresh (default Lease + RefreshTimeout).
	WaitTimeout time.Duration
	// Recheck: how often a cached credential is checked against the store in
	// case an invalidation message was lost (default 30s).
	Recheck time.Duration
	// ErrorTTL: how long a failed verdict is served from memory (default 5s).
	ErrorTTL time.Duration
}

func (t Timing) withDefaults() Timing {
	def := func(d *time.Duration, v time.Duration) {
		if *d == 0 {
			*d = v
		}
	}
	def(&t.Skew, 15*time.Second)
	def(&t.RefreshAhead, 2*time.Minute)
	def(&t.Lease, 15*time.Second)
	def(&t.RefreshTimeout, 10*time.Second)
	if t.RefreshTimeout >= t.Lease {
		t.RefreshTimeout = t.Lease * 2 / 3
	}
	def(&t.WaitTimeout, t.Lease+t.RefreshTimeout)
	def(&t.Recheck, 30*time.Second)
	def(&t.ErrorTTL, 5*time.Second)
	if t.Skew < 0 {
		t.Skew = 0
	}
	return t
}

// Options configure an Engine. Main builds them from the configuration.
type Options struct {
	DB      *pgxpool.Pool   // required when connectors are in use
	Redis   *redis.Client   // optional cache, lock and invalidation bus (see NewRedisClient)
	Keyring *secret.Keyring // required when connectors are in use
	Logger  *slog.Logger

	// Connectors are the connector entries of the manifest ("google/gmail").
	Connectors []Ref
	// Providers are the registered plugins to load. Nil loads every
	// registered plugin once connectors are in use.
	Providers []ProviderID
	// Getenv reads connector environment configuration (os.Getenv when nil).
	Getenv func(string) string
	// Integrations answers for the box's integrations (the Google client);
	// nil means a registry read through Getenv.
	Integrations *integrations.Registry
	// HTTPClient is handed to providers; nil means one with a 30s timeout.
	HTTPClient *http.Client
	Timing     Timing
}

// ConnectorEnv is the variable listing connectors to load when no manifest
// does ("google/gmail,notion").
const ConnectorEnv = "GUILDS_CONNECTORS"

// InUse reports whether connectors are in use and why: a manifest connector
// entry, an explicitly registered provider, or connector environment
// configuration (GUILDS_CONNECTORS or a variable a registered provider reads).
func InUse(o Options) (bool, string) {
	if len(o.Connectors) > 0 {
		return true, "manifest connector " + o.Connectors[0].String()
	}
	if len(o.Providers) > 0 {
		return true, "provider " + string(o.Providers[0])
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	if getenv(ConnectorEnv) != "" {
		return true, ConnectorEnv
	}
	reg := registryOf(o)
	for _, id := range Registered() {
		p, _ := Lookup(id)
		if ev, ok := p.(EnvVars); ok {
			for _, name := range ev.EnvVars() {
				if reg.VariableSet(name) {
					return true, name
				}
			}
		}
	}
	return false, ""
}

// registryOf is the integrations registry the options name, or one read
// through their Getenv.
func registryOf(o Options) *integrations.Registry {
	if o.Integrations != nil {
		return o.Integrations
	}
	return integrations.New(o.Getenv)
}

// Engine is the connector runtime of one process.
type Engine struct {
	db      *pgxpool.Pool
	rdb     *redis.Client
	keys    *secret.Keyring
	log     *slog.Logger
	t       Timing
	getenv  func(string) string
	integ   *integrations.Registry
	hc      *http.Client
	enabled map[ProviderID]bool
	inUse   bool

	mu       sync.Mutex
	bindings map[string]*binding // by catalog slug

	res *Resolver
}

// New builds the engine. When connectors are not in use it returns an idle
// engine without touching Postgres; when they are, Postgres must be reachable
// and the provider catalog is loaded from mcp_servers, or New fails with one
// line saying why.
func New(ctx context.Context, o Options) (*Engine, error) {
	e := &Engine{db: o.DB, rdb: o.Redis, keys: o.Keyring, log: o.Logger, t: o.Timing.withDefaults(),
		getenv: o.Getenv, integ: registryOf(o), hc: o.HTTPClient, bindings: map[string]*binding{}, enabled: map[ProviderID]bool{}}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.getenv == nil {
		e.getenv = os.Getenv
	}
	if e.hc == nil {
		e.hc = &http.Client{Timeout: 30 * time.Second}
	}
	inUse, why := InUse(o)
	if !inUse {
		e.res = newResolver(e, true)
		return e, nil
	}
	e.inUse = true
	refs := append([]Ref(nil), o.Connectors...)
	if v := e.getenv(ConnectorEnv); v != "" {
		for _, s := range strings.Split(v, ",") {
			ref, err := ParseRef(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", ConnectorEnv, err)
			}
			refs = append(refs, ref)
		}
	}
	for _, id := range o.Providers {
		e.enabled[id] = true
	}
	for _, r := range refs {
		e.enabled[r.Provider] = true
	}
	if o.Providers == nil {
		for _, id := range Registered() {
			e.enabled[id] = true
		}
	}
	for id := range e.enabled {
		if _, ok := Lookup(id); !ok && !isCatalogOnly(refs, id) {
			return nil, fmt.Errorf("connectors: provider %q is not compiled into this binary (registered: %v)", id, Registered())
		}
	}
	if o.Keyring == nil {
		return nil, fmt.Errorf("connectors are in use (%s) but GUILDS_ENCRYPTION_KEY is not set", why)
	}
	if o.DB == nil {
		return nil, fmt.Errorf("connectors are in use (%s) but no PostgreSQL database is configured (DATABASE_URL)", why)
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := e.loadCatalog(pctx); err != nil {
		return nil, fmt.Errorf("connectors are in use (%s) but the provider catalog cannot be loaded from PostgreSQL: %s", why, oneLine(err))
	}
	e.res = newResolver(e, false)
	return e, nil
}

// isCatalogOnly: manifest entries may name catalog servers served by the
// default injection (token servers without a plugin).
func isCatalogOnly(refs []Ref, id ProviderID) bool {
	for _, r := range refs {
		if r.Provider == id {
			return true
		}
	}
	return false
}

func oneLine(err error) string {
	return strings.Join(strings.Fields(err.Error()), " ")
}

// Close stops the engine's background work.
func (e *Engine) Close() { e.res.close() }

// InUse reports whether the engine was started with connectors in use.
func (e *Engine) InUse() bool { return e.inUse }

// Resolver is the call-time credential resolver.
func (e *Engine) Resolver() *Resolver { return e.res }

// binding is a catalog row joined with its configured provider.
type binding struct {
	slug     string
	ref      Ref
	cfg      string
	provider Provider
	oauth    OAuthProvider
	injector Injector
	header   catalogHeader
	// issuer is the authorization server the row names now (config.oauth.
	// issuer); "" when it names none.
	issuer string
	err    error
}

// issuerMoved reports whether c was issued by another authorization server
// than the one the row names now: the MCP server moved (its RFC 9728
// metadata names a new issuer, which the next connect wrote into the row).
// Logins that recorded no issuer, and rows that name none, cannot tell and
// are taken as current.
func (b *binding) issuerMoved(c Credential) bool {
	return b.issuer != "" && c.Client != nil && c.Client.Issuer != "" && c.Client.Issuer != b.issuer
}

func (b *binding) inject(c Credential) Injection {
	if b.injector != nil {
		return b.injector.Inject(c)
	}
	return b.header.inject(c)
}

// catalogHeader is how a token server without a plugin wants its key, from
// its catalog row ({"header": "X-API-KEY"} or {"header": "Authorization",
// "scheme": "Bearer"}), so that no call site has to know.
type catalogHeader struct {
	Header, Scheme string
}

func (h catalogHeader) inject(c Credential) Injection {
	if h.Header == "" || c.AccessToken == "" {
		return DefaultInjection(c)
	}
	v := c.AccessToken
	if h.Scheme != "" {
		v = h.Scheme + " " + v
	}
	return Injection{
		Headers: map[string]string{h.Header: v},
		Meta:    map[string]any{MetaTokenField: c.AccessToken},
	}
}

func (e *Engine) loadCatalog(ctx context.Context) error {
	rows, err := e.db.Query(ctx, `SELECT slug, config FROM mcp_servers ORDER BY slug`)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var slug string
		var cfg []byte
		if err := rows.Scan(&slug, &cfg); err != nil {
			return err
		}
		if b := e.binding(slug, cfg); b.err != nil {
			// Expected until set up: a server registering its OAuth client on first
			// connect, or one whose box integration is off (the Tools view says so).
			level := slog.LevelInfo
			if c, _ := catalog.ParseConfig(cfg); c.DynamicRegistration {
				level = slog.LevelDebug
			}
			e.log.Log(ctx, level, "connectors: catalog server not usable yet", "server", slug, "provider", b.ref.Provider, "reason", b.err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	e.log.Info("connectors: provider catalog loaded", "servers", n, "providers", len(e.enabled))
	return nil
}

func (e *Engine) bindingFor(rec *record) *binding {
	return e.binding(rec.conn.ServerSlug, rec.serverCfg)
}

// binding returns the configured provider of a catalog row, configuring it on
// first use or when the row's config changed.
func (e *Engine) binding(slug string, cfg []byte) *binding {
	e.mu.Lock()
	defer e.mu.Unlock()
	if b := e.bindings[slug]; b != nil && b.cfg == string(cfg) {
		return b
	}
	b := &binding{slug: slug, ref: refFromConfig(slug, cfg), cfg: string(cfg)}
	c, _ := catalog.ParseConfig(cfg) // lenient: no header named, default injection
	b.header = catalogHeader{Header: c.Header, Scheme: c.Scheme}
	b.issuer = c.OAuth.Issuer
	e.bindings[slug] = b
	p, ok := Lookup(b.ref.Provider)
	if !ok || !e.enabled[b.ref.Provider] {
		return b // no plugin: default injection, no refresh
	}
	if c, ok := p.(Configurer); ok {
		// The provider sees the row's client secrets opened; they stay sealed at rest.
		opened, err := OpenCatalogSecrets(e.keys, slug, cfg)
		if err != nil {
			b.err = err
			return b
		}
		cp, err := c.Configure(ProviderConfig{Server: slug, SubService: b.ref.SubService, Config: opened, Getenv: e.getenv,
			Integrations: e.integ, HTTPClient: e.hc})
		if err != nil {
			b.err = err
			return b
		}
		p = cp
	}
	b.provider = p
	b.oauth, _ = p.(OAuthProvider)
	b.injector, _ = p.(Injector)
	return b
}

func (e *Engine) active() error {
	if !e.inUse {
		return ErrNotInUse
	}
	return nil
}

// Get returns a connection with its health.
func (e *Engine) Get(ctx context.Context, id uuid.UUID) (Connection, error) {
	if err := e.active(); err != nil {
		return Connection{}, err
	}
	rec, err := readRecord(ctx, e.db, id)
	if err != nil {
		return Connection{}, err
	}
	return rec.conn, nil
}

// List returns every connection with its health, by server slug.
func (e *Engine) List(ctx context.Context) ([]Connection, error) {
	if err := e.active(); err != nil {
		return nil, err
	}
	recs, err := listRecords(ctx, e.db)
	if err != nil {
		return nil, err
	}
	out := make([]Connection, len(recs))
	for i, r := range recs {
		out[i] = r.conn
	}
	return out, nil
}

// EnsureConnection returns the connection of a catalog server at a scope,
// creating it pending when absent. ownerID is nil for the platform scope.
func (e *Engine) EnsureConnection(ctx context.Context, serverSlug, ownerScope string, ownerID *uuid.UUID) (uuid.UUID, error) {
	if err := e.active(); err != nil {
		return uuid.Nil, err
	}
	id, _, err := connstore.Ensure(ctx, e.db, serverSlug, ownerScope, ownerID)
	if errors.Is(err, store.ErrNotFound) {
		return uuid.Nil, fmt.Errorf("connectors: no catalog server %q", serverSlug)
	}
	if err != nil {
		return uuid.Nil, err
	}
	return id.UUID(), nil
}

// AbandonPending deletes a connection that never completed a login (still
// pending, no stored credential), such as one created for a connect that was
// then refused or timed out, so a failed connect leaves nothing behind. A
// connection that was ever connected is left alone. It reports whether the
// row was deleted.
func (e *Engine) AbandonPending(ctx context.Context, id uuid.UUID) (bool, error) {
	if err := e.active(); err != nil {
		return false, err
	}
	return connstore.DeleteNeverLoggedIn(ctx, e.db, connstore.ID(id))
}

// ConnectKey validates an API key (or configuration) with the connection's
// provider, stores it encrypted and marks the connection connected. The
// values of a ConfigProvider's fields are checked here (every missing or
// unknown one reported at once in a *FieldsError) and stored as they are.
func (e *Engine) ConnectKey(ctx context.Context, id uuid.UUID, fields map[string]string) (KeyValidation, error) {
	if err := e.active(); err != nil {
		return KeyValidation{}, err
	}
	rec, err := readRecord(ctx, e.db, id)
	if err != nil {
		return KeyValidation{}, err
	}
	b := e.bindingFor(rec)
	if b.err != nil {
		return KeyValidation{}, catalogRefused(rec.conn.ServerSlug, b.err)
	}
	var kv KeyValidation
	switch p := b.provider.(type) {
	case KeyProvider:
		kv, err = p.Validate(ctx, fields)
		if err != nil {
			e.log.Info("connectors: key rejected", "connection", id, "server", rec.conn.ServerSlug)
			return KeyValidation{}, fmt.Errorf("connection %s: key rejected: %w", rec.conn.ServerSlug, err)
		}
	case ConfigProvider:
		// Configuration, not a login: no token and no expiry, so it is never refreshed.
		values, err := checkValues(rec.conn.ServerSlug, p.Fields(), fields)
		if err != nil {
			e.log.Info("connectors: configuration refused", "connection", id, "server", rec.conn.ServerSlug)
			return KeyValidation{}, err
		}
		kv.Credential = Credential{Extra: values}
	default:
		if _, ok := b.provider.(OAuthProvider); ok {
			return KeyValidation{}, fmt.Errorf("connection %s uses OAuth: connect it with BeginOAuth", rec.conn.ServerSlug)
		}
		// No key plugin: store the key as a bearer token, or the fields as configuration.
		kv.Credential = Credential{AccessToken: fields["token"], Extra: withoutKey(fields, "token")}
	}
	// Every stored value joins the login's redaction set, so one too short
	// to redact is refused rather than stored and silently left unredacted.
	if probs := b.unredactable(kv.Credential); len(probs) > 0 {
		e.log.Info("connectors: value too short to redact refused", "connection", id, "server", rec.conn.ServerSlug)
		return KeyValidation{}, &FieldsError{Server: rec.conn.ServerSlug, Problems: probs}
	}
	v, err := putCredential(ctx, e.db, e.keys, id, kv.Credential, kv.AccountHint)
	if err != nil {
		return KeyValidation{}, err
	}
	e.changed(ctx, id, v)
	e.log.Info("connectors: connected", "connection", id, "server", rec.conn.ServerSlug)
	return kv, nil
}

func withoutKey(m map[string]string, k string) map[string]string {
	out := map[string]string{}
	for kk, v := range m {
		if kk != k {
			out[kk] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// changed tells every replica (and this one) that a connection's stored
// login changed.
func (e *Engine) changed(ctx context.Context, id uuid.UUID, version int64) {
	e.res.cachePut(ctx, id, version, time.Time{}, nil)
	e.res.invalidate(id, version)
	e.res.publish(ctx, id, version)
}

// Disconnect revokes the login at the provider (best effort), deletes the
// stored credential and marks the connection disconnected.
func (e *Engine) Disconnect(ctx context.Context, id uuid.UUID) error {
	if err := e.active(); err != nil {
		return err
	}
	rec, err := readRecord(ctx, e.db, id)
	if err != nil {
		return err
	}
	if b := e.bindingFor(rec); b.oauth != nil && rec.has {
		if cred, err := unseal(e.keys, id, rec.ct); err == nil {
			rctx, cancel := context.WithTimeout(ctx, e.t.RefreshTimeout)
			if err := b.oauth.Revoke(rctx, cred); err != nil {
				e.log.Warn("connectors: revoke failed; deleting the login anyway", "connection", id, "server", rec.conn.ServerSlug, "code", b.oauth.ClassifyError(err).Code)
			}
			cancel()
		}
	}
	v, err := wipeCredential(ctx, e.db, e.keys, id)
	if err != nil {
		return err
	}
	e.changed(ctx, id, v)
	e.log.Info("connectors: disconnected", "connection", id, "server", rec.conn.ServerSlug)
	return nil
}

// Forget drops every replica's cached credential of a connection that was
// deleted (a login's row cascades to its credential).
func (e *Engine) Forget(ctx context.Context, id uuid.UUID) {
	if e.inUse {
		e.changed(ctx, id, goneVersion)
	}
}

// Test resolves the connection's credential and, when its provider can, checks
// it against the remote service.
func (e *Engine) Test(ctx context.Context, id uuid.UUID) error {
	if err := e.active(); err != nil {
		return err
	}
	cred, err := e.res.Token(ctx, id)
	if err != nil {
		return err
	}
	rec, err := readRecord(ctx, e.db, id)
	if err != nil {
		return err
	}
	if t, ok := e.bindingFor(rec).provider.(Tester); ok {
		return t.Test(ctx, rec.conn.Ref.SubService, cred)
	}
	return nil
}

// KeyFields lists what a key or configuration connect of this connection
// asks for: the provider's fields, or one secret "token" without a plugin.
func (e *Engine) KeyFields(ctx context.Context, id uuid.UUID) ([]KeyField, error) {
	if err := e.active(); err != nil {
		return nil, err
	}
	rec, err := readRecord(ctx, e.db, id)
	if err != nil {
		return nil, err
	}
	b := e.bindingFor(rec)
	if b.err != nil {
		return nil, catalogRefused(rec.conn.ServerSlug, b.err)
	}
	// A token row that declares several keys (Wallet, Qonto) takes them as
	// its fields, every one a secret.
	if cfg, err := catalog.ParseConfig(rec.serverCfg); err == nil && len(cfg.KeyFields) > 0 {
		out := make([]KeyField, 0, len(cfg.KeyFields))
		for _, f := range cfg.KeyFields {
			out = append(out, KeyField{Name: f.Name, Label: f.Label, Secret: true, Optional: f.Optional})
		}
		return out, nil
	}
	switch p := b.provider.(type) {
	case KeyProvider:
		return p.Fields(), nil
	case ConfigProvider:
		return p.Fields(), nil
	}
	return []KeyField{{Name: "token", Label: "API key", Secret: true}}, nil
}
