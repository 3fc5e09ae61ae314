package mcppool

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/mcpoauth"
)

// ErrKeyUnchecked: the server could not be reached to check a key.
var ErrKeyUnchecked = connections.ErrKeyUnchecked

// ErrAddressRefused: the server's address is one the outbound policy refuses.
var ErrAddressRefused = connections.ErrAddressRefused

// Checker checks a key of a token MCP server (Cigale, OpenSea, Etherscan,
// …), or the values of a no-auth-with-config server, with the server itself:
// it lists its tools with them. It stores nothing: the connect service does
// (connections.Checker, connections.StoreChecked). A local adapter's login
// is the adapter host's to check (internal/adapters/host).
type Checker struct {
	DB     *pgxpool.Pool
	Engine *connectors.Engine // checks values against the provider's fields
	HTTP   *http.Client       // nil means http.DefaultClient
	Log    *slog.Logger
}

// checked is what a check accepted, with the pool's own view of it.
type checked struct {
	info   ServerInfo
	listed []Tool
	values map[string]string
}

func (c checked) forService() connections.Checked {
	return connections.Checked{Values: c.values, Listed: listedTools(c.listed)}
}

// CheckKey checks the key of a pending or disconnected login. A rejected key
// is ErrKeyRejected, an unreachable server ErrKeyUnchecked.
func (k Checker) CheckKey(ctx context.Context, row connstore.Connection, key string) (connections.Checked, error) {
	c, err := k.checkKey(ctx, row, key)
	return c.forService(), err
}

// CheckValues checks a no-auth-with-config server's values. The engine checks
// them against the provider's fields (a *connectors.FieldsError names every
// missing or unknown one, or connectors.ErrNoConfig when the server takes
// none); the server's tools are then listed with the headers or environment
// the provider makes of them. A refusal is ErrConfigRejected, an unreachable
// server ErrConfigUnchecked.
func (k Checker) CheckValues(ctx context.Context, row connstore.Connection, values map[string]string) (connections.Checked, error) {
	c, err := k.checkValues(ctx, row, values)
	return c.forService(), err
}

// load is the pool's view of the login's row, which must be an MCP server's.
func (k Checker) load(ctx context.Context, row connstore.Connection) (ServerInfo, error) {
	info := (&Pool{o: Options{DB: k.DB}}).infoOf(ctx, row)
	if info.Kind == catalog.KindAdapter {
		return info, &NotMCPError{Server: info.Slug}
	}
	return info, nil
}

func (k Checker) checkKey(ctx context.Context, row connstore.Connection, key string) (checked, error) {
	key, err := connections.TrimKey(key)
	if err != nil {
		return checked{}, err
	}
	info, err := k.load(ctx, row)
	if err != nil {
		return checked{}, err
	}
	c := checked{info: info, values: map[string]string{connectors.MetaTokenField: key}}
	c.listed, err = ListWith(ctx, k.HTTP, info, Headers(info, connectors.Credential{AccessToken: key}))
	if errors.Is(err, ErrKeyRejected) {
		return checked{}, err
	}
	if errors.Is(err, mcpoauth.ErrBlockedEndpoint) {
		return checked{}, ErrAddressRefused
	}
	if err != nil {
		// A server may echo the request in its error text: the key stays out of the log.
		k.log().Warn("mcp connect: key validation failed", "server", info.Slug,
			"err", withoutKey(err, key))
		return checked{}, ErrKeyUnchecked
	}
	if !AcceptedListing(info.Slug, c.listed) {
		return checked{}, ErrKeyRejected
	}
	return c, nil
}

// ErrConfigRejected: the server refused the configured values (401, or it
// listed no tool with them).
var ErrConfigRejected = errors.New("the server refused the configured values")

// ErrConfigUnchecked: the server could not be reached to check the values.
var ErrConfigUnchecked = errors.New("the server could not be reached to check the configured values; try again")

func (k Checker) checkValues(ctx context.Context, row connstore.Connection, values map[string]string) (checked, error) {
	info, err := k.load(ctx, row)
	if err != nil {
		return checked{}, err
	}
	inj, err := k.Engine.CheckConfig(ctx, row.ID.UUID(), values)
	if err != nil {
		return checked{}, err
	}
	listed, err := ListInjected(ctx, k.HTTP, info, inj)
	switch {
	case errors.Is(err, ErrKeyRejected):
		return checked{}, ErrConfigRejected
	case errors.Is(err, mcpoauth.ErrBlockedEndpoint):
		return checked{}, ErrAddressRefused
	case err != nil:
		k.log().Warn("mcp connect: configuration check failed", "server", info.Slug, "err", redactValues(oneLine(err), values))
		return checked{}, ErrConfigUnchecked
	case len(listed) == 0:
		return checked{}, ErrConfigRejected
	}
	return checked{info: info, listed: listed, values: values}, nil
}

// redactValues removes every value from a message a server may have echoed
// them into.
func redactValues(msg string, values map[string]string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			msg = strings.ReplaceAll(msg, v, "[REDACTED]")
		}
	}
	return msg
}

func (k Checker) log() *slog.Logger {
	if k.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return k.Log
}

// AcceptedListing: a key that lists nothing is rejected, and OpenSea answers an
// unauthorised key with only its get_instant_api_key tool.
func AcceptedListing(slug string, listed []Tool) bool {
	if len(listed) == 0 {
		return false
	}
	if slug == "opensea" && len(listed) == 1 && listed[0].RemoteName == "get_instant_api_key" {
		return false
	}
	return true
}
