package connections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Checker checks a key or configured values with the server itself before
// anything is stored: an MCP server lists its tools with them
// (mcppool.Checker), a local adapter asks its service (the adapter host). It
// stores nothing. It is given the login's row the service loaded.
type Checker interface {
	CheckKey(ctx context.Context, c connstore.Connection, key string) (Checked, error)
	CheckValues(ctx context.Context, c connstore.Connection, values map[string]string) (Checked, error)
	// CheckOpen lists the tools of a server that needs no login.
	CheckOpen(ctx context.Context, c connstore.Connection) (Checked, error)
}

// Checked is what a check accepted.
type Checked struct {
	// Values are what the engine stores ({"token": key} for a key).
	Values map[string]string
	// Listed are the tools the server listed with them (non-nil).
	Listed []grants.ListedTool
	// Hint is the account an adapter's check answered ("" keeps the engine's).
	Hint string
}

// Service is the connect service: every way a login is made (a key,
// configured values, a browser OAuth login) and what follows it (finish,
// probe, disconnect, delete) for the API, the terminal and the connect
// workflow's activities alike. See docs/adr/0611-connect-service.md.
type Service struct {
	DB     *pgxpool.Pool
	Engine *connectors.Engine
	// Integrations say what the box has set up (Connect refuses a
	// server that lacks it).
	Integrations *integrations.Registry
	// Checker checks keys and values with a remote MCP server (mcppool.Checker).
	Checker Checker
	// Sessions is the MCP pool: a finished login's session is dropped and
	// its first listing stored; nil skips both.
	Sessions Sessions
	// Adapters is the adapter host: it checks a local adapter's key, and a
	// finished adapter login, and stores its first listing; nil: an
	// adapter's login cannot be connected with a key.
	Adapters   Adapters
	Discoverer *mcpoauth.Discoverer
	Mark       MarkFunc // nil: MarkConnected
	Log        *slog.Logger
}

func (s *Service) deps() Deps {
	return Deps{DB: s.DB, Engine: s.Engine, Sessions: s.Sessions, Adapters: s.Adapters, Discoverer: s.Discoverer, Mark: s.Mark, Log: s.Log}
}

func (s *Service) log() *slog.Logger { return s.deps().log() }

// bounded is the pool as the connect's opening transaction and its reads use
// it: a busy pool answers store.ErrBusy instead of holding the request.
func (s *Service) bounded() store.Bounded { return store.Bounded{Pool: s.DB} }

// Request is what a connect through the API asks for. Which strategy makes
// the login follows from the server's auth: a key (token), configured values
// (none) or a browser login (oauth).
type Request struct {
	Login  ConnectInput
	Key    string
	Values map[string]string
	// BeginOAuth starts an OAuth server's browser login and answers its
	// authorization URL (the API starts the connect workflow).
	BeginOAuth func(ctx context.Context, c Connection) (string, error)
	// KeyStep, when set, is asked first about every connect; an answer takes
	// the connect over as a key login with extra steps (Pinned prices: a key
	// plus its coins). nil, nil leaves the connect to the server's auth.
	KeyStep func(ctx context.Context, r grants.ServerRoute) (*KeyStep, error)
	// BeginGitHub is the GitHub App's strategy: it starts the install (or
	// user authorization) of a github login and answers the URL to send the
	// operator to (the API starts the githubinstall workflow).
	BeginGitHub func(ctx context.Context, c Connection) (string, error)
}

// KeyStep is a key login with its own checks done and a step to run once the
// key is stored; a failed step wipes the key again.
type KeyStep struct {
	Key   string
	After func(ctx context.Context, c Connection) error
}

// Outcome is what a connect answers.
type Outcome struct {
	Connection       Connection
	AuthorizationURL string // an OAuth login waits for its callback
	Tools            int
}

// ServerError is a check's or a store's failure, naming the catalog server
// (its slug) so that the edge can say whose key or values were refused.
type ServerError struct {
	Server string
	Err    error
}

func (e *ServerError) Error() string { return e.Server + ": " + e.Err.Error() }
func (e *ServerError) Unwrap() error { return e.Err }

// NotConnectableError: the server is neither a remote MCP server nor a local
// adapter (the GitHub App has its own install flow).
type NotConnectableError struct{ Server string }

func (e *NotConnectableError) Error() string {
	return e.Server + " is not connected with a key or an MCP login; create its pending login with POST /api/mcp/connections"
}

// Connect makes a login of a server at a scope for a principal: the pending
// login is created (or a pending or disconnected one reused) and committed,
// then the server's strategy runs. A connected login at the scope is
// store.ErrConflict. A new login whose strategy fails is removed again, so a
// failed connect leaves nothing behind.
func (s *Service) Connect(ctx context.Context, p access.Principal, req Request) (Outcome, error) {
	var row connstore.Connection
	var created bool
	err := s.bounded().InTx(ctx, func(tx pgx.Tx) error {
		var err error
		row, created, err = ConnectRow(ctx, tx, p, s.Integrations, req.Login)
		return err
	})
	if err != nil {
		return Outcome{}, err
	}
	out, err := s.connect(ctx, row, req, audit.Actor(p))
	if err != nil && created {
		if rerr := grants.RemoveFailedLogin(context.WithoutCancel(ctx), s.bounded(), row.ID.String()); rerr != nil {
			s.log().Error("mcp connect: cannot remove a failed new login", "connection", row.ID, "err", rerr)
		}
	}
	return out, err
}

// connect runs the strategy of the login's server on the row Connect loaded,
// which every step is given rather than reading it again.
func (s *Service) connect(ctx context.Context, row connstore.Connection, req Request, actor string) (Outcome, error) {
	conn := ConnectionOf(row)
	srv, err := grants.LoadServerRoute(ctx, s.bounded(), conn.ServerID)
	if err != nil {
		return Outcome{}, err
	}
	if srv.Kind == catalog.KindGitHub && req.BeginGitHub != nil {
		u, err := req.BeginGitHub(ctx, conn)
		if err != nil {
			return Outcome{}, err
		}
		return Outcome{Connection: conn, AuthorizationURL: u}, nil
	}
	if srv.Kind != catalog.KindRemote && srv.Kind != catalog.KindAdapter {
		return Outcome{}, &NotConnectableError{Server: srv.Slug}
	}
	keyFields := keyFieldsOf(row)
	if srv.Auth != catalog.AuthNone && len(keyFields) == 0 && len(req.Values) > 0 {
		return Outcome{}, invalid("values", "are only for servers configured with values; "+srv.Slug+" is not")
	}
	if req.KeyStep != nil {
		step, err := req.KeyStep(ctx, srv)
		if err != nil || step != nil {
			if err != nil {
				return Outcome{}, err
			}
			return s.connectKeyStep(ctx, row, srv, step, actor)
		}
	}
	switch srv.Auth {
	case catalog.AuthToken:
		if len(keyFields) > 0 {
			// The multi-field key shape: ConnectKey checks the fields.
			if req.Key != "" {
				return Outcome{}, invalid("key", srv.Slug+" takes several keys; send them in values: "+fieldNames(keyFields))
			}
			return s.connectChecked(ctx, row, srv, req.Values, actor)
		}
		if strings.TrimSpace(req.Key) == "" {
			return Outcome{}, invalid("key", "is required for "+srv.Slug)
		}
		return s.connectChecked(ctx, row, srv, map[string]string{connectors.MetaTokenField: req.Key}, actor)
	case catalog.AuthOAuth:
		if req.BeginOAuth == nil {
			return Outcome{}, fmt.Errorf("%s connects with a browser login, which this caller cannot start", srv.Slug)
		}
		u, err := req.BeginOAuth(ctx, conn)
		if err != nil {
			return Outcome{}, err
		}
		return Outcome{Connection: conn, AuthorizationURL: u}, nil
	default:
		if req.Key != "" {
			return Outcome{}, invalid("key", srv.Slug+" takes no key; send its fields in values")
		}
		if srv.NoLogin {
			if len(req.Values) > 0 {
				return Outcome{}, invalid("values", srv.Slug+" needs no login and takes no values")
			}
			return s.connectOpen(ctx, row, srv, actor)
		}
		return s.connectChecked(ctx, row, srv, req.Values, actor)
	}
}

// keyFieldsOf is the key fields of a login's server (KeyFields); only a
// token server has them.
func keyFieldsOf(c connstore.Connection) []catalog.KeyField {
	if c.Server.Auth != catalog.AuthToken {
		return nil
	}
	return KeyFields(c.Server.Config)
}

// connectKeyStep is a key login with the caller's step after it.
func (s *Service) connectKeyStep(ctx context.Context, row connstore.Connection, srv grants.ServerRoute, step *KeyStep, actor string) (Outcome, error) {
	out, err := s.connectChecked(ctx, row, srv, map[string]string{connectors.MetaTokenField: step.Key}, actor)
	if err != nil || step.After == nil {
		return out, err
	}
	if err := step.After(ctx, out.Connection); err != nil {
		// The login is stored by now: wipe its key so that it is removed.
		if derr := s.Disconnect(context.WithoutCancel(ctx), row.ID.String(), actor); derr != nil {
			s.log().Error("mcp connect: cannot wipe the key of a failed connect", "connection", row.ID, "err", derr)
		}
		return Outcome{}, err
	}
	return out, nil
}

// connectChecked runs the key or values strategy and answers the fresh login.
func (s *Service) connectChecked(ctx context.Context, row connstore.Connection, srv grants.ServerRoute, values map[string]string, actor string) (Outcome, error) {
	r, err := s.connectKey(ctx, row, values, actor)
	if err != nil {
		return Outcome{}, &ServerError{Server: srv.Slug, Err: err}
	}
	fresh, err := LoadConnection(ctx, s.bounded(), row.ID.String())
	if err != nil {
		return Outcome{}, err
	}
	return Outcome{Connection: fresh, Tools: r.Tools}, nil
}

// ConnectKey connects an existing login with a key ({"token": key}) or the
// values its server is configured with. A remote MCP server's or a local
// adapter's login is checked with the server first (Checker) and stored with
// what it listed; another server's is checked by its provider only. Nothing
// is stored when a check fails. actor is who connects it (audit.Actor).
func (s *Service) ConnectKey(ctx context.Context, connectionID string, values map[string]string, actor string) (Result, error) {
	id, err := connstore.ParseID(connectionID)
	if err != nil {
		return Result{}, err
	}
	c, err := connstore.Get(ctx, s.DB, id)
	if err != nil {
		return Result{}, err
	}
	return s.connectKey(ctx, c, values, actor)
}

// connectKey is ConnectKey of a login whose row the caller loaded.
func (s *Service) connectKey(ctx context.Context, c connstore.Connection, values map[string]string, actor string) (Result, error) {
	var err error
	fields := KeyFields(c.Server.Config)
	if c.Server.Auth == catalog.AuthToken && len(fields) > 0 {
		if values, err = CheckKeyFields(c.Server.Slug, fields, values); err != nil {
			return Result{}, err
		}
	}
	checked := Checked{Values: values}
	if check := s.checker(c.Server.Kind); check != nil {
		// Several key fields are checked as values (the adapter gets them
		// all); one key as a key.
		if c.Server.Auth == catalog.AuthNone || len(fields) > 0 {
			checked, err = check.CheckValues(ctx, c, values)
		} else {
			checked, err = check.CheckKey(ctx, c, values[connectors.MetaTokenField])
		}
		if err != nil {
			return Result{}, err
		}
	}
	return StoreChecked(ctx, s.deps(), c, checked, actor)
}

// checker is what checks a login of a server of that kind with the server
// itself: the adapter host for an adapter, the MCP pool's Checker for a
// remote server; nil for other kinds (their provider checks them).
func (s *Service) checker(kind catalog.Kind) Checker {
	switch {
	case kind == catalog.KindAdapter && s.Adapters != nil:
		return s.Adapters
	case kind == catalog.KindAdapter:
		return refuseUnchecked{}
	case kind == catalog.KindRemote && s.Checker != nil:
		return s.Checker
	}
	return nil
}

// refuseUnchecked stands in for the adapter host where a caller has none: an
// adapter's key is never stored unchecked.
type refuseUnchecked struct{}

var errNoHost = errors.New("this caller cannot check a local adapter's key")

func (refuseUnchecked) CheckKey(context.Context, connstore.Connection, string) (Checked, error) {
	return Checked{}, errNoHost
}
func (refuseUnchecked) CheckValues(context.Context, connstore.Connection, map[string]string) (Checked, error) {
	return Checked{}, errNoHost
}
func (refuseUnchecked) CheckOpen(context.Context, connstore.Connection) (Checked, error) {
	return Checked{}, errNoHost
}

// StoreChecked stores checked values with the engine and finishes the login
// (its row as the caller loaded it) with what the check listed (Finish); a
// failed finish wipes them again.
func StoreChecked(ctx context.Context, d Deps, row connstore.Connection, c Checked, actor string) (Result, error) {
	kv, err := d.Engine.ConnectKey(ctx, row.ID.UUID(), c.Values)
	if err != nil {
		return Result{}, err
	}
	if c.Hint != "" {
		kv.AccountHint = c.Hint
	}
	r, err := finish(ctx, d, row, Options{HintFrom: HintGiven, Hint: kv.AccountHint, Listed: c.Listed, Actor: actor})
	if err != nil {
		return Result{}, err
	}
	d.log().Info("mcp login: connected", "connection", row.ID.String(), "tools", r.Tools)
	return r, nil
}

// Finish finishes a login an OAuth exchange stored (see the package Finish).
func (s *Service) Finish(ctx context.Context, connectionID string, o Options) (Result, error) {
	return Finish(ctx, s.deps(), connectionID, o)
}

// Choose stores what the operator chose for a login after it was made
// (its settings: Drive's folder) and finishes it: the adapter checks the
// login with them, its answer is the account hint, and the login is marked
// connected with its binding and first listing. A check that fails leaves
// the login as it was, with the settings it had.
func (s *Service) Choose(ctx context.Context, connectionID, actor string, settings map[string]string) (Result, error) {
	id, err := connstore.ParseID(connectionID)
	if err != nil {
		return Result{}, err
	}
	before, err := connstore.Settings(ctx, s.DB, id)
	if err != nil {
		return Result{}, err
	}
	if err := connstore.SetSettings(ctx, s.DB, id, settings); err != nil {
		return Result{}, err
	}
	r, err := Finish(ctx, s.deps(), connectionID, Options{HintFrom: HintGiven, CheckAdapter: true, Actor: actor})
	if err == nil && r.Pending {
		err = errors.New("the login still needs a choice")
	}
	if err != nil {
		restore := map[string]string{}
		for k := range settings {
			restore[k] = before[k]
		}
		if rerr := connstore.SetSettings(context.WithoutCancel(ctx), s.DB, id, restore); rerr != nil {
			s.log().Error("mcp login: cannot restore a login's settings", "connection", connectionID, "err", rerr)
		}
		return Result{}, err
	}
	return r, nil
}

// Open returns the login of the catalog server with a slug at one owner (nil
// at the platform scope), creating it pending when absent; created reports a
// new row (the terminal's connect).
func (s *Service) Open(ctx context.Context, serverSlug, ownerScope string, ownerID *uuid.UUID) (id connstore.ID, created bool, err error) {
	id, created, err = connstore.Ensure(ctx, s.DB, serverSlug, ownerScope, ownerID)
	if errors.Is(err, store.ErrNotFound) {
		return id, false, fmt.Errorf("connectors: no catalog server %q", serverSlug)
	}
	return id, created, err
}

// AbandonNew deletes a login a connect created that never logged in (still
// pending, no stored credential); one that did is kept.
func (s *Service) AbandonNew(ctx context.Context, connectionID string) (bool, error) {
	id, err := connstore.ParseID(connectionID)
	if err != nil {
		return false, err
	}
	return connstore.DeleteNeverLoggedIn(ctx, s.DB, id)
}

// Abandon ends an OAuth login that will not complete: its pending state is
// deleted, and so is the login when it is new and never worked (a pending
// one, or one whose token the service refused after the exchange and that
// nothing was ever bound to). A retry over an older login keeps it, and its
// bindings.
func Abandon(ctx context.Context, db *pgxpool.Pool, connectionID string) error {
	id, err := connstore.ParseID(connectionID)
	if err != nil {
		return err
	}
	return store.InTx(ctx, db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM connection_oauth_pending WHERE connection_id = $1`, id); err != nil {
			return err
		}
		return connstore.DeleteNeverWorked(ctx, tx, id)
	})
}

// Probe asks a remote MCP server or a local adapter whether the stored login
// works (a tools/list, or the adapter's own check) and answers a line to show
// the operator; other logins have nothing more to ask ("").
func (s *Service) Probe(ctx context.Context, connectionID string) (string, error) {
	id, err := connstore.ParseID(connectionID)
	if err != nil {
		return "", err
	}
	c, err := connstore.Get(ctx, s.DB, id)
	switch {
	case err != nil:
		return "", err
	case c.Server.Kind == catalog.KindAdapter && s.Adapters != nil:
		return s.Adapters.Probe(ctx, connectionID)
	case c.Server.Kind == catalog.KindRemote && s.Sessions != nil:
		return s.Sessions.Probe(ctx, connectionID)
	}
	return "", nil
}

// Disconnect wipes a login's credential (the engine tells every replica) and
// drops its cached session; the login and its bindings stay. A platform
// login's credential is the box's and is refused (ErrPlatformReserved).
// actor is who disconnects it, for the audit trail (audit.Actor).
func (s *Service) Disconnect(ctx context.Context, connectionID, actor string) error {
	id, err := connstore.ParseID(connectionID)
	if err != nil {
		return err
	}
	c, err := connstore.Get(ctx, s.DB, id)
	if err != nil {
		return err
	}
	if c.OwnerScope == string(grants.ScopePlatform) {
		return fmt.Errorf("%w; a platform login's credential is the box's and is not wiped from here", ErrPlatformReserved)
	}
	if err := s.Engine.Disconnect(ctx, id.UUID()); err != nil {
		return err
	}
	if s.Sessions != nil {
		s.Sessions.Drop(connectionID)
	}
	// The engine's wipe is its own transaction; the event follows it.
	return audit.RecordLogin(ctx, s.DB, connectionID, audit.ActionDisconnect, "disconnected", actor)
}

// Delete removes a login the principal can see, with its bindings, listed
// tools and credential; a platform login is refused (DeleteConnection).
func (s *Service) Delete(ctx context.Context, db store.DB, p access.Principal, connectionID string) error {
	return DeleteConnection(ctx, db, p, connectionID)
}

func invalid(field, msg string) error {
	return &validation.Error{Problems: []validation.Problem{{Field: field, Message: msg}}}
}
