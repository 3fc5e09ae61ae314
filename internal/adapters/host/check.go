package host

import (
	"context"
	"errors"
	"fmt"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/mcpoauth"
)

// Check runs the adapter's own check of the login's stored values and
// answers the service's account hint (a Gmail address…). A refusal matches
// adapters.ErrRejected; adapters.ErrChoiceNeeded is the adapter's own words
// (Drive's folder is still to choose). A successful OAuth callback stores
// the hint as the login's account_hint.
func (h *Host) Check(ctx context.Context, connectionID string) (string, error) {
	ctx, _ = connectors.WithUsed(ctx) // the redirect guard drops what was injected
	l, err := h.load(ctx, connectionID)
	if err != nil {
		return "", err
	}
	conn, err := h.conn(ctx, l)
	if err != nil {
		return "", err
	}
	reached := &TimeoutError{Server: l.slug, After: h.o.Timeout}
	ctx, cancel := context.WithTimeoutCause(ctx, h.o.Timeout, reached)
	defer cancel()
	hint, err := l.adapter.Check(ctx, conn)
	switch {
	case err != nil && context.Cause(ctx) == reached:
		return "", reached
	case errors.Is(err, adapters.ErrChoiceNeeded):
		return "", err // the adapter's own words, which name no value
	case adapters.Rejected(err):
		return "", rejectedError{l.slug}
	case errors.Is(err, mcpoauth.ErrBlockedEndpoint):
		return "", fmt.Errorf("%s: %w", l.slug, connections.ErrAddressRefused)
	case err != nil:
		// A service may echo the request in its answer; the operator's
		// terminal gets the reason without the login's values.
		return "", fmt.Errorf("%s: %w", l.slug, connectors.Scrub(err, conn.Cred))
	}
	return hint, nil
}

// Probe asks the service whether the login's stored values still work and
// answers a line to show the operator.
func (h *Host) Probe(ctx context.Context, connectionID string) (string, error) {
	l, err := h.load(ctx, connectionID)
	if err != nil {
		return "", err
	}
	hint, err := h.Check(ctx, connectionID)
	switch {
	case err != nil:
		return "", err
	case hint == "":
		return l.slug + " accepts the stored key", nil
	}
	return l.slug + " accepts the stored key (" + hint + ")", nil
}

// rejectedError is a service refusing a login's stored key; it matches
// adapters.ErrRejected.
type rejectedError struct{ slug string }

func (e rejectedError) Error() string {
	return e.slug + " refuses the stored key: connect the login again"
}
func (e rejectedError) Unwrap() error { return adapters.ErrRejected }

// conn is what calling the login's adapter takes: its service's URL, the
// stored credential resolved now and its settings.
func (h *Host) conn(ctx context.Context, l login) (adapters.Conn, error) {
	cred, err := h.o.Credentials.Token(ctx, l.id)
	if err != nil {
		return adapters.Conn{}, err
	}
	c := adapters.Conn{HTTP: h.o.HTTP, BaseURL: l.url, Cred: cred}
	c.Settings, err = h.settings(ctx, l)
	return c, err
}

// WithConn runs fn with what calling the login's adapter takes, for a
// request that is not one of its tools (Drive's folder list at Connect).
// fn's work is bounded by Timeout; an OAuth login answered 401 is refreshed
// once and fn run again, as a tool call is.
func (h *Host) WithConn(ctx context.Context, connectionID string, fn func(ctx context.Context, c adapters.Conn) error) error {
	l, err := h.load(ctx, connectionID)
	if err != nil {
		return err
	}
	return h.with(ctx, l, h.o.Timeout, false, fn)
}

// List is the login's tool list: the curated copy the catalog publishes for
// its server, less what the adapter does not offer with the stored login
// (the Wallet lists uniswap_swap only with a Uniswap key).
func (h *Host) List(ctx context.Context, connectionID string) ([]grants.ListedTool, error) {
	l, err := h.load(ctx, connectionID)
	if err != nil {
		return nil, err
	}
	listed, err := grants.CatalogTools(ctx, h.o.DB, l.Server.ID.String())
	if _, lists := l.adapter.(toolLister); err != nil || !lists {
		return listed, err
	}
	cred, err := h.o.Credentials.Token(ctx, l.id)
	if err != nil {
		return nil, err
	}
	return offered(l.adapter, cred, listed), nil
}

// Sync lists the login's tools, stores them (grants.SyncListedTools) and
// counts them: a finished login's first listing.
func (h *Host) Sync(ctx context.Context, connectionID string) (int, error) {
	listed, err := h.List(ctx, connectionID)
	if err != nil {
		return 0, err
	}
	return len(listed), grants.SyncListedTools(ctx, h.o.DB, connectionID, listed)
}

// toolLister is an adapter whose tool list depends on the login: Lists
// reports whether it offers a curated tool with these stored values.
type toolLister interface {
	Lists(cred connectors.Credential, tool string) bool
}

// offered keeps the curated tools the adapter offers with cred.
func offered(a any, cred connectors.Credential, listed []grants.ListedTool) []grants.ListedTool {
	l, ok := a.(toolLister)
	if !ok {
		return listed
	}
	out := make([]grants.ListedTool, 0, len(listed))
	for _, t := range listed {
		if l.Lists(cred, t.Name) {
			out = append(out, t)
		}
	}
	return out
}
