// Package connect holds the activities of the OAuth connect workflow
// (workflows/connect). They load and store every secret themselves, so that
// only ids, a marker standing for the authorization URL and sealed callback
// parameters cross into the workflow's history.
package connect

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/temporal"

	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
)

// MarkConnectedFunc writes a connected login's hint and its enabled binding
// (connections.MarkConnected).
type MarkConnectedFunc = connections.MarkFunc

// Activities are the connect workflow's activities with their dependencies.
type Activities struct {
	DB            *pgxpool.Pool
	Engine        *connectors.Engine
	Keyring       *secret.Keyring
	Pool          *mcppool.Pool
	Adapters      *host.Host // checks and lists an adapter's new login (Gmail)
	Discoverer    *mcpoauth.Discoverer
	MarkConnected MarkConnectedFunc // nil: connections.MarkConnected
	Log           *slog.Logger
	// ClientName is sent when registering a client (default "guilds").
	ClientName string
}

// Error types of non-retryable failures, mapped to statuses at the API edge.
const (
	ErrTypeSetup    = "oauth_setup"    // discovery, registration or endpoint policy
	ErrTypeRefused  = "oauth_refused"  // the provider refused the code, or bad state
	ErrTypeInternal = "oauth_internal" // a sealed callback that cannot be opened
)

// PrepareInput starts a login.
type PrepareInput struct {
	ConnectionID string
	RedirectURI  string
	// KeepURL: return PendingURLMarker instead of the authorization URL,
	// which stays sealed in the pending login (connectors.Engine.
	// PendingAuthorizationURL). Workflows recorded before it leave it false.
	KeepURL bool `json:",omitempty"`
}

// PendingURLMarker is what Prepare returns, and the workflow's update
// answers, in place of the authorization URL: it never enters history.
const PendingURLMarker = "sealed:pending-login"

// Prepare discovers the server's metadata, registers a client when needed
// (stored on mcp_servers.config), stores the pending login and returns the
// authorization URL. Rows of a box-configured provider skip discovery.
func (a *Activities) Prepare(ctx context.Context, in PrepareInput) (string, error) {
	id, err := connstore.ParseID(in.ConnectionID)
	var c connstore.Connection
	if err == nil {
		c, err = connstore.Get(ctx, a.DB, id)
	}
	if errors.Is(err, store.ErrNotFound) {
		return "", temporal.NewNonRetryableApplicationError("the connection no longer exists", ErrTypeSetup, nil)
	}
	if err != nil {
		return "", err
	}
	serverID, slug, mcpURL, cfg := c.Server.ID.String(), c.Server.Slug, c.Server.URL, []byte(c.Server.Config)
	if discovers(cfg) {
		name := a.ClientName
		if name == "" {
			name = "guilds"
		}
		// Discovery sees the stored client secrets opened, and what it writes
		// back is sealed again.
		opened, err := connectors.OpenCatalogSecrets(a.Keyring, slug, cfg)
		if err != nil {
			return "", temporal.NewNonRetryableApplicationError("OAuth setup failed: "+err.Error(), ErrTypeSetup, nil)
		}
		p, err := a.Discoverer.Prepare(ctx, mcpURL, in.RedirectURI, name, opened)
		if err != nil {
			return "", temporal.NewNonRetryableApplicationError("OAuth setup failed: "+err.Error(), ErrTypeSetup, nil)
		}
		if p.Changed {
			if p.Config, err = connectors.SealCatalogSecrets(a.Keyring, slug, p.Config); err != nil {
				return "", temporal.NewNonRetryableApplicationError("OAuth setup failed: "+err.Error(), ErrTypeSetup, nil)
			}
			// Registrations another login stored meanwhile (another redirect
			// URI) are kept: this write adds its own, never replaces theirs.
			if _, err := a.DB.Exec(ctx, `UPDATE mcp_servers SET config = CASE
    WHEN $2::jsonb->'oauth' ? 'registrations' THEN jsonb_set($2::jsonb, '{oauth,registrations}',
        coalesce(config->'oauth'->'registrations', '{}'::jsonb) || ($2::jsonb->'oauth'->'registrations'))
    ELSE $2::jsonb END,
    updated_at = now() WHERE id = $1`, serverID, p.Config); err != nil {
				return "", err
			}
			// The server moved to another authorization server: the logins
			// the former one issued are marked for reconnecting now (the
			// resolver never sends nor refreshes them either way).
			if was, _ := catalog.ParseConfig(cfg); movedAway(was.OAuth, p.OAuth) {
				if n, err := a.Engine.IssuerMoved(ctx, c.Server.ID); err != nil {
					return "", err
				} else if n > 0 {
					a.log().Warn("connect: the server names a new authorization server; logins of the former one need reconnecting",
						"server", slug, "logins", n)
				}
			}
		}
	}
	// A retry over an older attempt: its state must not complete this one.
	if _, err := a.DB.Exec(ctx, `DELETE FROM connection_oauth_pending WHERE connection_id = $1`, id); err != nil {
		return "", err
	}
	u, err := a.Engine.BeginOAuth(ctx, id.UUID(), in.RedirectURI)
	if err != nil {
		return "", temporal.NewNonRetryableApplicationError("OAuth setup failed: "+err.Error(), ErrTypeSetup, nil)
	}
	a.log().Info("connect: authorization URL ready", "connection", in.ConnectionID)
	if in.KeepURL {
		return PendingURLMarker, nil
	}
	return u, nil
}

// movedAway reports whether discovery found the server on another
// authorization server than the stored row named: another issuer, or, for a
// row from before issuers were recorded, another token endpoint.
func movedAway(was catalog.OAuth, now mcpoauth.OAuthConfig) bool {
	if was.Issuer != "" {
		return was.Issuer != now.Issuer
	}
	return was.TokenURL != "" && was.TokenURL != now.TokenURL
}

// discovers reports whether a catalog row gets its OAuth endpoints and client
// from the server's metadata: rows of the generic provider. A row naming
// another provider (Drive: "google") uses the client the box configures for
// it, and discovery would overwrite that provider.
func discovers(cfg []byte) bool {
	row, _ := catalog.ParseConfig(cfg) // lenient: a bad config discovers, as before
	return row.Provider == "" || row.Provider == "oauth2"
}

// CallbackParams are what the browser brought back; the API seals them with
// the keyring (bound to the connection id) before they reach the workflow.
type CallbackParams struct {
	State string `json:"state"`
	Code  string `json:"code"`
}

// Seal encrypts callback parameters for the workflow.
func Seal(kr *secret.Keyring, connectionID string, p CallbackParams) ([]byte, error) {
	b, _ := json.Marshal(p)
	return kr.Seal(b, []byte("oauth-callback:"+connectionID))
}

// ExchangeInput carries the sealed callback.
type ExchangeInput struct {
	ConnectionID string
	Sealed       []byte
}

// Exchange consumes the pending login (state and verifier are single use)
// and trades the code for tokens, which the engine stores encrypted. It runs
// once: a retry could only find the state already consumed.
func (a *Activities) Exchange(ctx context.Context, in ExchangeInput) error {
	plain, err := a.Keyring.Open(in.Sealed, []byte("oauth-callback:"+in.ConnectionID))
	if err != nil {
		return temporal.NewNonRetryableApplicationError("the callback cannot be opened", ErrTypeInternal, nil)
	}
	var p CallbackParams
	if err := json.Unmarshal(plain, &p); err != nil {
		return temporal.NewNonRetryableApplicationError("the callback is malformed", ErrTypeInternal, nil)
	}
	id, err := a.Engine.CompleteOAuth(ctx, p.State, p.Code)
	if err != nil {
		return temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRefused, nil)
	}
	if id.String() != in.ConnectionID {
		return temporal.NewNonRetryableApplicationError("the callback belongs to another login", ErrTypeRefused, nil)
	}
	return nil
}

// FinishResult is what a completed login reports.
type FinishResult struct {
	AccountHint string
	Tools       int // -1 when the first listing failed
}

// Finish marks the login connected with its account hint and enabled
// binding, then lists and stores its tools (connections.Finish). A local
// adapter behind an OAuth login (Gmail) checks the new token with the
// service first, as a key login's Connect does, and its answer (the mailbox
// address) is the hint.
func (a *Activities) Finish(ctx context.Context, connectionID string) (FinishResult, error) {
	r, err := a.service().Finish(ctx, connectionID, connections.Options{HintFrom: connections.HintStored, CheckAdapter: true})
	if errors.Is(err, connections.ErrRefused) {
		return FinishResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeRefused, nil)
	}
	if err != nil {
		return FinishResult{}, err
	}
	if r.ListErr != nil {
		a.log().Warn("connect: first listing failed; tools appear at the next run start", "connection", connectionID, "err", r.ListErr.Error())
	}
	a.log().Info("connect: connected", "connection", connectionID, "tools", r.Tools)
	return FinishResult{AccountHint: r.AccountHint, Tools: r.Tools}, nil
}

// Abandon ends a login that will not complete: its pending state is deleted,
// and so is the connection when it never was connected (a new pending
// login). A disconnected login keeps its row and bindings.
func (a *Activities) Abandon(ctx context.Context, connectionID string) error {
	return connections.Abandon(ctx, a.DB, connectionID)
}

// service is the connect service over the activities' pool and engine.
func (a *Activities) service() *connections.Service {
	svc := &connections.Service{DB: a.DB, Engine: a.Engine, Discoverer: a.Discoverer, Mark: a.MarkConnected, Log: a.Log}
	if a.Pool != nil {
		svc.Sessions = a.Pool
	}
	if a.Adapters != nil {
		svc.Adapters = a.Adapters
	}
	return svc
}

func (a *Activities) log() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}
