package pinnedprices

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// Serves reports whether a catalog row is served by this adapter.
func Serves(srv grants.ServerRoute) bool {
	return srv.Kind == catalog.KindAdapter && srv.Adapter == Name
}

// Connect is what a Pinned prices login's connect takes besides the key and
// the coins: where the coins are written, the client CoinGecko is asked
// with, and the bound on one of its answers (the adapter host's).
type Connect struct {
	DB      *pgxpool.Pool
	HTTP    *http.Client
	Timeout time.Duration
}

// Step is the connect service's key step of a Pinned prices login
// (connections.Request.KeyStep): its coins are quoted with the pasted key
// first, so that a refused key (adapters.ErrRejected) or an unquoted coin (a
// *validation.Error naming it) stores nothing; the key is then checked and
// stored like any adapter key, and After writes the list. Another server
// takes no coins: nil, nil leaves its connect as it is.
func (c Connect) Step(ctx context.Context, srv grants.ServerRoute, key string, coins []Coin) (*connections.KeyStep, error) {
	pinned := Serves(srv)
	switch {
	case coins != nil && !pinned:
		return nil, invalid("coins", "are only for Pinned prices logins; "+srv.Slug+" is not one")
	case !pinned || srv.Auth != catalog.AuthToken:
		return nil, nil
	}
	key = strings.TrimSpace(key)
	if key == "" {
		return nil, invalid("key", "is required for "+srv.Slug)
	}
	checked, err := c.CheckCoins(ctx, adapters.Conn{HTTP: c.HTTP, BaseURL: srv.URL, Cred: connectors.Credential{AccessToken: key}}, coins)
	if err != nil {
		return nil, err
	}
	return &connections.KeyStep{Key: key, After: func(ctx context.Context, conn connections.Connection) error {
		return store.InTx(ctx, c.DB, func(tx pgx.Tx) error { return ReplaceCoins(ctx, tx, conn.ID, checked) })
	}}, nil
}

// CheckCoins validates a list and asks CoinGecko to quote it: every coin it
// does not quote is a problem of its own.
func (c Connect) CheckCoins(ctx context.Context, conn adapters.Conn, in []Coin) ([]Coin, error) {
	coins, err := ValidateCoins("coins", in)
	if err != nil {
		return nil, err
	}
	ids := make([]string, len(coins))
	for i, co := range coins {
		ids[i] = co.ID
	}
	actx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	prices, err := Quote(actx, conn, ids)
	if err != nil {
		return nil, err
	}
	if err := Unquoted("coins", coins, prices); err != nil {
		return nil, err
	}
	return coins, nil
}

func invalid(field, msg string) error {
	return &validation.Error{Problems: []validation.Problem{{Field: field, Message: msg}}}
}
