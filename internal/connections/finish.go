// Package connections is the connect service (Service): every way a login
// is made (a key, configured values, a browser OAuth login) and the one place
// a login is finished, whichever flow checked it (a key or values checked by
// the MCP pool's Checker, an OAuth exchange in the connect workflow or in the
// terminal). The logins table itself is connstore's. See
// docs/adr/0610-one-finish-for-every-login.md and
// docs/adr/0611-connect-service.md.
package connections

import (
	"context"
	"errors"
	"log/slog"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/store"
)

// Sessions is the MCP pool as the service uses it (*mcppool.Pool): remote
// servers' logins only. It is an interface, not the pool itself, because the
// pool's Checker answers this package's types: mcppool imports connections,
// never the reverse.
type Sessions interface {
	// Drop ends the connection's cached session, if any.
	Drop(connectionID string)
	// SyncTools lists the connection's tools, stores them and counts them.
	SyncTools(ctx context.Context, connectionID string) (int, error)
	// Probe asks the server whether the stored login works.
	Probe(ctx context.Context, connectionID string) (string, error)
}

// Adapters is the adapter host as the service uses it
// (*internal/adapters/host.Host): local adapters' logins only.
type Adapters interface {
	Checker
	// Check runs the adapter's own check of the stored login and answers
	// the service's account hint.
	Check(ctx context.Context, connectionID string) (hint string, err error)
	// Sync lists the login's curated tools, stores them and counts them.
	Sync(ctx context.Context, connectionID string) (int, error)
	// Probe asks the service whether the stored login works.
	Probe(ctx context.Context, connectionID string) (string, error)
}

// MarkFunc writes a connected login's hint and its enabled binding
// (MarkRowConnected), given the login's row.
type MarkFunc func(ctx context.Context, db store.DB, c connstore.Connection, accountHint string) error

// Deps are what a finish works with.
type Deps struct {
	DB       *pgxpool.Pool
	Engine   *connectors.Engine
	Sessions Sessions // nil: no session to drop and no first listing of a remote server
	Adapters Adapters // nil: no check and no first listing of an adapter's login
	// Discoverer, when set, lets a login without a stored hint ask the
	// server's userinfo endpoint (HintStored).
	Discoverer *mcpoauth.Discoverer
	Mark       MarkFunc // nil: MarkRowConnected
	Log        *slog.Logger
}

// HintSource says where the written account hint comes from.
type HintSource int

const (
	// HintGiven writes Options.Hint as it is (a key login's check answered it).
	HintGiven HintSource = iota
	// HintStored writes the hint the exchange stored on the connection, or
	// the userinfo endpoint's answer when there is none (Deps.Discoverer).
	HintStored
)

// Options are where the flows differ; each is named for the flow that sets it.
type Options struct {
	HintFrom HintSource
	Hint     string // HintGiven
	// Listed: tools a key login already listed with the checked key (non-nil
	// even when empty: nil means none were listed yet). They
	// are stored in the marking transaction, a failure wipes the stored
	// credential again, and no first listing follows.
	Listed []grants.ListedTool
	// CheckAdapter: an adapter's login is checked with its service first
	// (the connect workflow's OAuth: Gmail), and a hint it answers wins.
	CheckAdapter bool
	// ListRemoteOnly: the first listing runs only for a remote server's login
	// (the terminal's OAuth connect); otherwise for every login.
	ListRemoteOnly bool
	// Actor is who connected the login, for the audit trail; "" is the
	// user who started its browser login (audit.RecordLogin).
	Actor string
}

// ErrRefused: an adapter's service refused the new login; its credential
// was wiped.
var ErrRefused = errors.New("the service refused the new login: check that every permission was granted, then connect again")

// Result is what a finished login reports.
type Result struct {
	AccountHint string
	Tools       int // tools stored; -1 when the first listing failed
	// Listed are the tools a key login's check listed (Options.Listed).
	Listed  []grants.ListedTool
	ListErr error // why the first listing failed; the login is connected anyway
	// FirstListing: the first listing ran (whether or not it failed).
	FirstListing bool
	// Pending: the adapter's check needs the operator's choice first
	// (adapters.ErrChoiceNeeded, Drive's folder): the login stays pending,
	// with no binding and no listing, until Choose stores it.
	Pending bool
}

// Finish marks a checked login connected: account hint, enabled binding and
// (for a key login) its listed tools in one transaction; then its cached
// session is dropped and, unless it brought its tools, the first listing
// stored. A failed first listing is reported in Result, not as an error.
func Finish(ctx context.Context, d Deps, connectionID string, o Options) (Result, error) {
	id, err := connstore.ParseID(connectionID)
	if err != nil {
		return Result{}, err
	}
	row, err := connstore.Get(ctx, d.DB, id)
	if err != nil {
		return Result{}, err
	}
	return finish(ctx, d, row, o)
}

// finish is Finish of a login whose row the caller loaded.
func finish(ctx context.Context, d Deps, row connstore.Connection, o Options) (Result, error) {
	id, connectionID := row.ID.UUID(), row.ID.String()
	var err error
	adapter := row.Server.Kind == catalog.KindAdapter
	hint := o.Hint
	if o.HintFrom == HintStored {
		hint = storedHint(ctx, d, row)
	}
	if o.CheckAdapter && adapter && d.Adapters != nil {
		hint, err = checkAdapter(ctx, d, id, hint)
		if errors.Is(err, adapters.ErrChoiceNeeded) {
			if err := connstore.SetWaiting(ctx, d.DB, connstore.ID(id)); err != nil {
				return Result{}, err
			}
			d.log().Info("mcp login: waiting for the operator's choice", "connection", connectionID)
			return Result{Pending: true}, nil
		}
		if err != nil {
			return Result{}, err
		}
	}
	mark := d.Mark
	if mark == nil {
		mark = MarkRowConnected
	}
	err = store.InTx(ctx, d.DB, func(tx pgx.Tx) error {
		if o.Listed != nil {
			if err := grants.SyncRowTools(ctx, tx, row, o.Listed); err != nil {
				return err
			}
		}
		if err := mark(ctx, tx, row, hint); err != nil {
			return err
		}
		return audit.RecordLogin(ctx, tx, connectionID, audit.ActionConnect, "connected", o.Actor)
	})
	if err != nil {
		if o.Listed != nil {
			if derr := d.Engine.Disconnect(context.WithoutCancel(ctx), id); derr != nil {
				d.log().Error("mcp login: cannot wipe the credential of a failed connect", "connection", connectionID, "err", derr)
			}
		}
		return Result{}, err
	}
	res := Result{AccountHint: hint, Tools: len(o.Listed), Listed: o.Listed}
	if d.Sessions != nil {
		d.Sessions.Drop(connectionID)
	}
	sync := d.syncer(row.Server.Kind)
	if o.Listed != nil || sync == nil || (o.ListRemoteOnly && row.Server.Kind != catalog.KindRemote) {
		return res, nil
	}
	res.FirstListing = true
	if res.Tools, res.ListErr = sync(ctx, connectionID); res.ListErr != nil {
		res.Tools = -1
	}
	return res, nil
}

// syncer is what lists and stores a login's tools for its server's kind:
// the adapter host for an adapter, the MCP pool for any other (nil when the
// caller has none).
func (d Deps) syncer(kind catalog.Kind) func(ctx context.Context, connectionID string) (int, error) {
	switch {
	case kind == catalog.KindAdapter && d.Adapters != nil:
		return d.Adapters.Sync
	case kind != catalog.KindAdapter && d.Sessions != nil:
		return d.Sessions.SyncTools
	}
	return nil
}

// checkAdapter checks an adapter's new login with its service; a refusal
// wipes the stored credential.
func checkAdapter(ctx context.Context, d Deps, id uuid.UUID, hint string) (string, error) {
	h, err := d.Adapters.Check(ctx, id.String())
	if errors.Is(err, adapters.ErrRejected) {
		if derr := d.Engine.Disconnect(ctx, id); derr != nil {
			return "", derr
		}
		return "", ErrRefused
	}
	if err != nil {
		return "", err
	}
	if h != "" {
		return h, nil
	}
	return hint, nil
}

func (d Deps) log() *slog.Logger {
	if d.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return d.Log
}
