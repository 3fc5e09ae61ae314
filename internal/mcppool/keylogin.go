package mcppool

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// ErrKeyUnchecked: the server could not be reached to check a key.
var ErrKeyUnchecked = errors.New("the server could not be reached to check the key; try again")

// ErrAddressRefused: the server's address is one the outbound policy refuses.
var ErrAddressRefused = errors.New("the server's address is refused: private, loopback and cloud metadata addresses are not called unless GUILDS_OAUTH_ALLOW_PRIVATE=1")

// KeyLogin connects a token MCP server (Cigale, OpenSea, Etherscan, …) or a
// no-auth-with-config one: the key or the values are checked by listing the
// server's tools with them, and only accepted ones are stored, with the listed
// tools, the connected state and the enabled binding. The API and the CLI
// both connect these servers through it.
type KeyLogin struct {
	DB     *pgxpool.Pool
	Engine *connectors.Engine
	Pool   *Pool        // its cached session of the login is dropped; may be nil
	HTTP   *http.Client // nil means http.DefaultClient
	Log    *slog.Logger
}

// Connect checks and stores the key of a pending or disconnected login.
// A rejected key is ErrKeyRejected, an unreachable server ErrKeyUnchecked;
// either way nothing is stored.
func (k KeyLogin) Connect(ctx context.Context, connectionID, key string) ([]Tool, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return nil, ErrKeyRejected
	}
	// Refused before the key is sent anywhere; the engine refuses it again
	// before storing (connectors.Engine.ConnectKey).
	if err := connectors.CheckKey(key); err != nil {
		return nil, &validation.Error{Problems: []validation.Problem{{Field: "key", Message: err.Error()}}}
	}
	info, err := (&Pool{o: Options{DB: k.DB}}).load(ctx, connectionID)
	if err != nil {
		return nil, err
	}
	if info.Kind == catalog.KindAdapter {
		return k.connectAdapter(ctx, connectionID, info, key)
	}
	listed, err := ListWith(ctx, k.HTTP, info, Headers(info, connectors.Credential{AccessToken: key}))
	if errors.Is(err, ErrKeyRejected) {
		return nil, err
	}
	if errors.Is(err, mcpoauth.ErrBlockedEndpoint) {
		return nil, ErrAddressRefused
	}
	if err != nil {
		// A server may echo the request in its error text: the key stays out of the log.
		k.log().Warn("mcp connect: key validation failed", "server", info.Slug,
			"err", withoutKey(err, key))
		return nil, ErrKeyUnchecked
	}
	if !AcceptedListing(info.Slug, listed) {
		return nil, ErrKeyRejected
	}
	id, err := uuid.Parse(connectionID)
	if err != nil {
		return nil, store.ErrNotFound
	}
	kv, err := k.Engine.ConnectKey(ctx, id, map[string]string{"token": key})
	if err != nil {
		return nil, err
	}
	return k.finish(ctx, id, info, kv, listed)
}

// ErrConfigRejected: the server refused the configured values (401, or it
// listed no tool with them).
var ErrConfigRejected = errors.New("the server refused the configured values")

// ErrConfigUnchecked: the server could not be reached to check the values.
var ErrConfigUnchecked = errors.New("the server could not be reached to check the configured values; try again")

// ConnectConfig connects a no-auth-with-config server. The engine checks the
// values against the provider's fields (a *connectors.FieldsError names every
// missing or unknown one, or connectors.ErrNoConfig when the server takes
// none); the server's tools are then listed with the headers or environment
// the provider makes of them, and only values that list tools are stored,
// with the listing, the connected state and the enabled binding. A refusal
// is ErrConfigRejected, an unreachable server ErrConfigUnchecked; nothing is
// stored then.
func (k KeyLogin) ConnectConfig(ctx context.Context, connectionID string, values map[string]string) ([]Tool, error) {
	id, err := uuid.Parse(connectionID)
	if err != nil {
		return nil, store.ErrNotFound
	}
	info, err := (&Pool{o: Options{DB: k.DB}}).load(ctx, connectionID)
	if err != nil {
		return nil, err
	}
	inj, err := k.Engine.CheckConfig(ctx, id, values)
	if err != nil {
		return nil, err
	}
	listed, err := ListInjected(ctx, k.HTTP, info, inj)
	switch {
	case errors.Is(err, ErrKeyRejected):
		return nil, ErrConfigRejected
	case errors.Is(err, mcpoauth.ErrBlockedEndpoint):
		return nil, ErrAddressRefused
	case err != nil:
		k.log().Warn("mcp connect: configuration check failed", "server", info.Slug, "err", redactValues(oneLine(err), values))
		return nil, ErrConfigUnchecked
	case len(listed) == 0:
		return nil, ErrConfigRejected
	}
	kv, err := k.Engine.ConnectKey(ctx, id, values)
	if err != nil {
		return nil, err
	}
	return k.finish(ctx, id, info, kv, listed)
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

// finish stores what a checked login listed, marks it connected with its
// enabled binding, and drops any cached session; on failure the stored
// credential is wiped again (connections.Finish).
func (k KeyLogin) finish(ctx context.Context, id uuid.UUID, info ServerInfo, kv connectors.KeyValidation, listed []Tool) ([]Tool, error) {
	d := connections.Deps{DB: k.DB, Engine: k.Engine, Log: k.Log}
	if k.Pool != nil {
		d.Sessions = k.Pool
	}
	o := connections.Options{HintFrom: connections.HintGiven, Hint: kv.AccountHint, Listed: listedTools(listed)}
	if _, err := connections.Finish(ctx, d, id.String(), o); err != nil {
		return nil, err
	}
	k.log().Info("mcp login: connected", "connection", id.String(), "server", info.Slug, "tools", len(listed))
	return listed, nil
}

func (k KeyLogin) log() *slog.Logger {
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

// connectAdapter checks a local adapter's key with the service itself (its
// ping), then stores it with the adapter's curated tools.
func (k KeyLogin) connectAdapter(ctx context.Context, connectionID string, info ServerInfo, key string) ([]Tool, error) {
	a, err := adapters.Get(info.Adapter)
	if err != nil {
		return nil, err
	}
	actx, cancel := context.WithTimeout(ctx, AdapterTimeout)
	defer cancel()
	hint, err := a.Check(actx, adapters.Conn{HTTP: k.HTTP, BaseURL: info.URL, Cred: connectors.Credential{AccessToken: key}})
	switch {
	case adapters.Rejected(err):
		return nil, ErrKeyRejected
	case errors.Is(err, mcpoauth.ErrBlockedEndpoint):
		return nil, ErrAddressRefused
	case err != nil:
		k.log().Warn("adapter connect: key check failed", "server", info.Slug, "err", withoutKey(err, key))
		return nil, ErrKeyUnchecked
	}
	listed, err := adapterTools(ctx, k.DB, info.ServerID, info.Slug)
	if err != nil {
		return nil, err
	}
	id, err := uuid.Parse(connectionID)
	if err != nil {
		return nil, store.ErrNotFound
	}
	kv, err := k.Engine.ConnectKey(ctx, id, map[string]string{"token": key})
	if err != nil {
		return nil, err
	}
	if hint != "" {
		kv.AccountHint = hint
	}
	return k.finish(ctx, id, info, kv, listed)
}
