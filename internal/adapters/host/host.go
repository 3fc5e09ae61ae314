// Package host serves the logins of local adapters (internal/adapters): it
// calls their tools, lists their curated tools, checks a key before it is
// stored and a stored login with the service, and lends what calling an
// adapter takes to a route that is not one of its tools (Drive's folders).
// It is the adapters' side of what internal/mcppool is for MCP servers; no
// MCP session is involved. internal/remote routes a call here by the catalog
// kind the offer knows. See docs/adr/0622-adapter-host.md.
package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
)

// Timeout bounds one adapter call's HTTP work (the design card's 30 s).
const Timeout = 30 * time.Second

// MaxTimeout is the longest one adapter call may take when its tool asks for
// more than Timeout (adapters.ToolTimeouts); the run workflow's adapter class
// is sized on it.
const MaxTimeout = adapters.MaxToolTimeout

// Credentials is what the host needs of the connector engine's resolver.
type Credentials interface {
	Token(ctx context.Context, id uuid.UUID) (connectors.Credential, error)
	Refresh(ctx context.Context, id uuid.UUID) (connectors.Credential, error)
	// MarkRejected records a login the service refuses for good.
	MarkRejected(ctx context.Context, id uuid.UUID, code string) error
}

// Options build a Host.
type Options struct {
	DB          *pgxpool.Pool
	Credentials Credentials // the engine's *connectors.Resolver
	// HTTP carries the adapters' requests; nil means a client without a
	// global timeout (each call has its own deadline). Redirects to another
	// host never carry the login's values.
	HTTP *http.Client
	Log  *slog.Logger
	// Timeout overrides Timeout (tests only).
	Timeout time.Duration
}

// Host serves adapter logins. Its methods are safe for concurrent use.
type Host struct {
	o   Options
	log *slog.Logger
}

// New builds a host.
func New(o Options) *Host {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.HTTP == nil {
		o.HTTP = &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	}
	o.HTTP = connectors.GuardRedirects(o.HTTP)
	if o.Timeout == 0 {
		o.Timeout = Timeout
	}
	return &Host{o: o, log: o.Log}
}

// login is an adapter login's row with what its server's config names: the
// adapter that serves it and, for a token row, its several keys.
type login struct {
	connstore.Connection
	id        uuid.UUID
	slug, url string
	auth      catalog.Auth
	adapter   adapters.Adapter
	keyFields []catalog.KeyField
}

// NotAdapterError: the login's server is not served by a local adapter.
type NotAdapterError struct{ Server string }

func (e *NotAdapterError) Error() string { return e.Server + " is not served by a local adapter" }

// load reads an adapter login's row (one query). A deleted login is
// connectors.ErrUnknownConnection, and the resolver forgets it.
func (h *Host) load(ctx context.Context, connectionID string) (login, error) {
	id, err := connstore.ParseID(connectionID)
	if err != nil {
		return login{}, err
	}
	c, err := connstore.Get(ctx, h.o.DB, id)
	if errors.Is(err, store.ErrNotFound) {
		return login{}, h.gone(id.UUID())
	}
	if err != nil {
		return login{}, err
	}
	return fromRow(c)
}

// fromRow is the host's view of a login row; the adapter must be built in.
func fromRow(c connstore.Connection) (login, error) {
	if c.Server.Kind != catalog.KindAdapter {
		return login{}, &NotAdapterError{Server: c.Server.Slug}
	}
	sc, _ := catalog.ParseConfig(c.Server.Config) // lenient: what decoded is used
	a, err := adapters.Get(sc.Adapter)
	if err != nil {
		return login{}, err
	}
	l := login{Connection: c, id: c.ID.UUID(), slug: c.Server.Slug, url: c.Server.URL, auth: c.Server.Auth, adapter: a}
	if l.auth == catalog.AuthToken {
		l.keyFields = sc.KeyFields
	}
	return l, nil
}

// goneSource is the resolver's side of a deleted login (connectors.Resolver).
type goneSource interface{ Gone(id uuid.UUID) }

func (h *Host) gone(id uuid.UUID) error {
	if g, ok := h.o.Credentials.(goneSource); ok {
		g.Gone(id)
	}
	return fmt.Errorf("the login %s was deleted: %w", id, connectors.ErrUnknownConnection)
}

// Call runs a tool of the login's adapter with its stored values, resolved
// now. The answer and the error are redacted of every value the call used
// (a token refreshed on the way included).
func (h *Host) Call(ctx context.Context, connectionID, tool string, args json.RawMessage) (string, error) {
	ctx, used := connectors.WithUsed(ctx)
	out, err := h.call(ctx, connectionID, tool, args)
	parts, err := used.Redact([]tools.Part{{Text: out}}, err)
	return parts[0].Text, err
}

func (h *Host) call(ctx context.Context, connectionID, tool string, args json.RawMessage) (string, error) {
	l, err := h.load(ctx, connectionID)
	if err != nil {
		return "", err
	}
	if l.Status == connstore.StatusDisconnected {
		return "", &connectors.ErrReconnectRequired{ConnectionID: l.id, Server: l.slug, Code: connectors.CodeDisconnected}
	}
	limit := adapters.CallTimeout(l.adapter, tool, h.o.Timeout, MaxTimeout)
	var out string
	err = h.with(ctx, l, limit, true, func(ctx context.Context, c adapters.Conn) error {
		var err error
		out, err = l.adapter.Call(ctx, c, tool, args)
		return err
	})
	var he *adapters.HTTPError
	// A key refused with 401 or 403 is dead. An OAuth service also answers
	// 403 for a missing scope or a quota, which its own message explains.
	if errors.As(err, &he) && he.Refused() && l.auth != catalog.AuthOAuth {
		return "", fmt.Errorf("%s refused the stored key (HTTP %d): connect the login again with a valid key", l.slug, he.Status)
	}
	var reached *TimeoutError
	var rr *connectors.ErrReconnectRequired
	if err != nil && !errors.As(err, &reached) && !errors.As(err, &rr) {
		return "", h.scrub(context.WithoutCancel(ctx), l.id, err)
	}
	return out, err
}

// with runs fn with what calling the login's adapter takes, bounded by
// limit: an OAuth login answered 401 is refreshed once and fn run again; with
// mark, a fresh token refused again marks the login for reconnecting (a tool
// call), otherwise that 401 is fn's answer (WithConn).
func (h *Host) with(ctx context.Context, l login, limit time.Duration, mark bool, fn func(context.Context, adapters.Conn) error) error {
	ctx, _ = connectors.WithUsed(ctx) // the redirect guard drops what was injected
	cred, err := h.o.Credentials.Token(ctx, l.id)
	if err != nil {
		return err
	}
	reached := &TimeoutError{Server: l.slug, After: limit}
	ctx, cancel := context.WithTimeoutCause(ctx, limit, reached)
	defer cancel()
	conn := adapters.Conn{HTTP: h.o.HTTP, BaseURL: l.url, Cred: cred}
	if conn.Settings, err = h.settings(ctx, l); err != nil {
		return err
	}
	err = fn(ctx, conn)
	var he *adapters.HTTPError
	if l.auth == catalog.AuthOAuth && errors.As(err, &he) && he.Status == http.StatusUnauthorized {
		// As for MCP sessions: one silent refresh and one retry.
		if conn.Cred, err = h.o.Credentials.Refresh(ctx, l.id); err != nil {
			return err
		}
		h.log.Info("adapter host: token refreshed after a 401", "connection", l.id)
		err = fn(ctx, conn)
		if mark && errors.As(err, &he) && he.Status == http.StatusUnauthorized {
			return h.rejected(context.WithoutCancel(ctx), l)
		}
	}
	if err != nil && context.Cause(ctx) == reached {
		return reached
	}
	return err
}

// rejected marks a login whose fresh token the service still refuses.
func (h *Host) rejected(ctx context.Context, l login) error {
	if err := h.o.Credentials.MarkRejected(ctx, l.id, "token_rejected"); err != nil {
		h.log.Error("adapter host: cannot mark the login reconnect_required", "connection", l.id, "err", err)
	}
	h.log.Warn("adapter host: service rejects a fresh token; login needs reconnecting", "connection", l.id)
	return &connectors.ErrReconnectRequired{ConnectionID: l.id, Server: l.slug, Code: "token_rejected"}
}

// scrub cuts the login's stored values out of an error's text: a service may
// echo the request in its answer.
func (h *Host) scrub(ctx context.Context, id uuid.UUID, err error) error {
	cred, cerr := h.o.Credentials.Token(ctx, id)
	if cerr != nil {
		return err
	}
	return connectors.Scrub(err, cred)
}

// settings are the login's settings for an adapter that reads them
// (adapters.SettingsUser), nil for the others, which cost no query.
func (h *Host) settings(ctx context.Context, l login) (map[string]string, error) {
	if su, ok := l.adapter.(adapters.SettingsUser); !ok || !su.UsesSettings() {
		return nil, nil
	}
	return connstore.Settings(ctx, h.o.DB, connstore.ID(l.id))
}

// ModelName is the model-facing name of an adapter's tool.
func ModelName(slug, remote string) string { return grants.ModelName(slug, remote) }
