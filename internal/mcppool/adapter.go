package mcppool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections/connstore"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/store"
)

// AdapterTimeout bounds one adapter call's HTTP work (the design card's 30 s).
const AdapterTimeout = 30 * time.Second

// AdapterMaxTimeout is the longest one adapter call may take when its tool
// asks for more than AdapterTimeout (adapters.ToolTimeouts); the run
// workflow's adapter class is sized on it.
const AdapterMaxTimeout = 90 * time.Second

// adapterInfo reports whether the connection is served by a local adapter,
// with its server's row. A connection with an open MCP session is not, and
// costs no query: its session's row is answered.
func (p *Pool) adapterInfo(ctx context.Context, connectionID string) (ServerInfo, bool, error) {
	p.mu.Lock()
	s := p.sessions[connectionID]
	p.mu.Unlock()
	if s != nil {
		return s.info, false, nil
	}
	info, err := p.load(ctx, connectionID)
	if id, perr := uuid.Parse(connectionID); perr == nil && errors.Is(err, store.ErrNotFound) {
		return info, false, p.gone(id)
	}
	if err != nil {
		return info, false, err
	}
	return info, info.Kind == catalog.KindAdapter, nil
}

// callAdapter runs a tool of a local adapter with the login's stored values,
// resolved now; no MCP session is involved.
func (p *Pool) callAdapter(ctx context.Context, connectionID string, info ServerInfo, tool string, args json.RawMessage) (string, error) {
	a, err := adapters.Get(info.Adapter)
	if err != nil {
		return "", err
	}
	id, err := uuid.Parse(connectionID)
	if err != nil {
		return "", store.ErrNotFound
	}
	if info.Status == connectors.StatusDisconnected {
		return "", &connectors.ErrReconnectRequired{ConnectionID: id, Server: info.Slug, Code: connectors.CodeDisconnected}
	}
	cred, err := p.o.Credentials.Token(ctx, id)
	if err != nil {
		return "", err
	}
	limit := adapters.CallTimeout(a, tool, p.o.AdapterTimeout, AdapterMaxTimeout)
	reached := &TimeoutError{Server: info.Slug, Op: "HTTP request", After: limit}
	ctx, cancel := context.WithTimeoutCause(ctx, limit, reached)
	defer cancel()
	conn := adapters.Conn{HTTP: p.o.HTTPClient, BaseURL: info.URL, Cred: cred}
	if conn.Settings, err = p.settings(ctx, a, id); err != nil {
		return "", err
	}
	out, err := a.Call(ctx, conn, tool, args)
	var he *adapters.HTTPError
	if info.Auth == catalog.AuthOAuth && errors.As(err, &he) && he.Status == http.StatusUnauthorized {
		// As for MCP sessions: one silent refresh and one retry; a fresh
		// token refused again means the login must be reconnected.
		if conn.Cred, err = p.o.Credentials.Refresh(ctx, id); err != nil {
			return "", err
		}
		p.log.Info("mcppool: token refreshed after a 401", "connection", connectionID)
		out, err = a.Call(ctx, conn, tool, args)
		if errors.As(err, &he) && he.Status == http.StatusUnauthorized {
			return "", p.rejected(context.WithoutCancel(ctx), connectionID, &session{id: id, info: info})
		}
	}
	// A key refused with 401 or 403 is dead. An OAuth service also answers
	// 403 for a missing scope or a quota, which its own message explains.
	if errors.As(err, &he) && he.Refused() && info.Auth != catalog.AuthOAuth {
		return "", fmt.Errorf("%s refused the stored key (HTTP %d): connect the login again with a valid key", info.Slug, he.Status)
	}
	if err != nil && context.Cause(ctx) == reached {
		return "", reached
	}
	if err != nil {
		return "", p.scrub(context.WithoutCancel(ctx), connectionID, err) // as MCP call errors are
	}
	return out, nil
}

// toolLister is an adapter whose tool list depends on the login: Lists
// reports whether it offers a curated tool with these stored values (the
// Wallet lists uniswap_swap only with a Uniswap key).
type toolLister interface {
	Lists(cred connectors.Credential, tool string) bool
}

// offeredTools keeps the curated tools the adapter offers with cred.
func offeredTools(a adapters.Adapter, cred connectors.Credential, listed []Tool) []Tool {
	l, ok := a.(toolLister)
	if !ok {
		return listed
	}
	out := listed[:0:0]
	for _, t := range listed {
		if l.Lists(cred, t.RemoteName) {
			out = append(out, t)
		}
	}
	return out
}

// rejectedField is an adapter's refusal that names which of a login's
// several keys the service refused (the Wallet's).
type rejectedField interface {
	RejectedField() string
}

// KeyRejectedError is a refused key of a multi-field login, naming the
// field; it matches ErrKeyRejected.
type KeyRejectedError struct{ Field string }

func (e *KeyRejectedError) Error() string {
	return "the server rejected the key " + e.Field
}
func (e *KeyRejectedError) Is(target error) bool { return target == ErrKeyRejected }

// adapterListing is an adapter connection's tool list with its stored login
// (adapterTools, less what the adapter does not offer with it).
func (p *Pool) adapterListing(ctx context.Context, connectionID string, info ServerInfo) ([]Tool, error) {
	listed, err := adapterTools(ctx, p.o.DB, info.ServerID, info.Slug)
	if err != nil {
		return nil, err
	}
	a, err := adapters.Get(info.Adapter)
	if _, lists := a.(toolLister); err != nil || !lists {
		return listed, nil
	}
	id, err := uuid.Parse(connectionID)
	if err != nil {
		return nil, store.ErrNotFound
	}
	cred, err := p.o.Credentials.Token(ctx, id)
	if err != nil {
		return nil, err
	}
	return offeredTools(a, cred, listed), nil
}

// adapterTools is an adapter connection's tool list: the curated copy the
// catalog publishes for its server.
func adapterTools(ctx context.Context, db store.DB, serverID, slug string) ([]Tool, error) {
	rows, err := db.Query(ctx, `SELECT ct.name, ct.description, ct.input_schema FROM mcp_catalog_tools ct
		WHERE ct.server_id::text = $1 ORDER BY ct.position, ct.name`, serverID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	var out []Tool
	for rows.Next() {
		var t Tool
		if err := rows.Scan(&t.RemoteName, &t.Description, &t.Schema); err != nil {
			return nil, err
		}
		t.Name = ModelName(slug, t.RemoteName)
		out = append(out, t)
	}
	return out, rows.Err()
}

// Probe asks the service whether the connection's stored login still works:
// a local adapter's own check, or a tools/list on an MCP server's session.
// It answers a line to show the operator ("" when the row names no server).
func (p *Pool) Probe(ctx context.Context, connectionID string) (string, error) {
	hint, isAdapter, err := p.CheckAdapter(ctx, connectionID)
	if err != nil {
		return "", err
	}
	info, err := p.load(ctx, connectionID)
	if err != nil {
		return "", err
	}
	if isAdapter && hint == "" {
		return info.Slug + " accepts the stored key", nil
	}
	if isAdapter {
		return info.Slug + " accepts the stored key (" + hint + ")", nil
	}
	if info.URL == "" && info.Command == "" {
		return "", nil // no server to ask
	}
	tools, err := p.List(ctx, connectionID)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%d tools listed", len(tools)), nil
}

// CheckAdapter runs a local adapter's own check of the connection's stored
// login and answers the service's account hint (a Gmail address…); isAdapter
// is false, with nothing asked, when the connection is not an adapter's.
// Probe words the hint for the operator; a successful OAuth callback stores
// it as the login's account_hint.
func (p *Pool) CheckAdapter(ctx context.Context, connectionID string) (hint string, isAdapter bool, err error) {
	ctx, _ = connectors.WithUsed(ctx) // the redirect guard drops what was injected
	info, isAdapter, err := p.adapterInfo(ctx, connectionID)
	if err != nil || !isAdapter {
		return "", false, err
	}
	a, err := adapters.Get(info.Adapter)
	if err != nil {
		return "", true, err
	}
	id, err := uuid.Parse(connectionID)
	if err != nil {
		return "", true, store.ErrNotFound
	}
	cred, err := p.o.Credentials.Token(ctx, id)
	if err != nil {
		return "", true, err
	}
	reached := &TimeoutError{Server: info.Slug, Op: "HTTP request", After: p.o.AdapterTimeout}
	ctx, cancel := context.WithTimeoutCause(ctx, p.o.AdapterTimeout, reached)
	defer cancel()
	conn := adapters.Conn{HTTP: p.o.HTTPClient, BaseURL: info.URL, Cred: cred}
	if conn.Settings, err = p.settings(ctx, a, id); err != nil {
		return "", true, err
	}
	hint, err = a.Check(ctx, conn)
	switch {
	case err != nil && context.Cause(ctx) == reached:
		return "", true, reached
	case errors.Is(err, adapters.ErrChoiceNeeded):
		return "", true, err // the adapter's own words, which name no value
	case adapters.Rejected(err):
		return "", true, rejectedError{info.Slug}
	case errors.Is(err, mcpoauth.ErrBlockedEndpoint):
		return "", true, fmt.Errorf("%s: %w", info.Slug, ErrAddressRefused)
	case err != nil:
		// A service may echo the request in its answer; the operator's
		// terminal gets the reason without the login's values.
		return "", true, fmt.Errorf("%s: %w", info.Slug, p.scrub(context.WithoutCancel(ctx), connectionID, err))
	}
	return hint, true, nil
}

// rejectedError is a service refusing a login's stored key; it matches
// adapters.ErrRejected.
type rejectedError struct{ slug string }

func (e rejectedError) Error() string {
	return e.slug + " refuses the stored key: connect the login again"
}
func (e rejectedError) Unwrap() error { return adapters.ErrRejected }

// settings are the login's settings for an adapter that reads them
// (adapters.SettingsUser), nil for the others, which cost no query.
func (p *Pool) settings(ctx context.Context, a adapters.Adapter, id uuid.UUID) (map[string]string, error) {
	if su, ok := a.(adapters.SettingsUser); !ok || !su.UsesSettings() {
		return nil, nil
	}
	return connstore.Settings(ctx, p.o.DB, connstore.ID(id))
}

// WithAdapterConn runs fn with what calling the connection's adapter takes
// (its service's URL, the stored credential and settings), for a request
// that is not one of its tools (Drive's folder list at Connect). fn's work
// is bounded by AdapterTimeout; an OAuth login answered 401 is refreshed
// once and fn run again, as a tool call is.
func (p *Pool) WithAdapterConn(ctx context.Context, connectionID string, fn func(ctx context.Context, c adapters.Conn) error) error {
	info, isAdapter, err := p.adapterInfo(ctx, connectionID)
	if err != nil {
		return err
	}
	if !isAdapter {
		return fmt.Errorf("%s is not served by a local adapter", info.Slug)
	}
	a, err := adapters.Get(info.Adapter)
	if err != nil {
		return err
	}
	id, err := uuid.Parse(connectionID)
	if err != nil {
		return store.ErrNotFound
	}
	cred, err := p.o.Credentials.Token(ctx, id)
	if err != nil {
		return err
	}
	reached := &TimeoutError{Server: info.Slug, Op: "HTTP request", After: p.o.AdapterTimeout}
	ctx, cancel := context.WithTimeoutCause(ctx, p.o.AdapterTimeout, reached)
	defer cancel()
	conn := adapters.Conn{HTTP: p.o.HTTPClient, BaseURL: info.URL, Cred: cred}
	if conn.Settings, err = p.settings(ctx, a, id); err != nil {
		return err
	}
	err = fn(ctx, conn)
	var he *adapters.HTTPError
	if info.Auth == catalog.AuthOAuth && errors.As(err, &he) && he.Status == http.StatusUnauthorized {
		if conn.Cred, err = p.o.Credentials.Refresh(ctx, id); err != nil {
			return err
		}
		err = fn(ctx, conn)
	}
	if err != nil && context.Cause(ctx) == reached {
		return reached
	}
	return err
}
