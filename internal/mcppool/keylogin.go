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
	"github.com/guilds/guilds/internal/connections/connstore"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// ErrKeyUnchecked: the server could not be reached to check a key.
var ErrKeyUnchecked = errors.New("the server could not be reached to check the key; try again")

// ErrAddressRefused: the server's address is one the outbound policy refuses.
var ErrAddressRefused = errors.New("the server's address is refused: private, loopback and cloud metadata addresses are not called unless GUILDS_OAUTH_ALLOW_PRIVATE=1")

// Checker checks a key of a token MCP server (Cigale, OpenSea, Etherscan,
// …) or a local adapter, or the values of a no-auth-with-config server, with
// the server itself: an MCP server lists its tools with them, an adapter
// pings its service. It stores nothing: the connect service does
// (connections.Checker, connections.StoreChecked).
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
	hint   string
	values map[string]string
}

func (c checked) forService() connections.Checked {
	return connections.Checked{Values: c.values, Listed: listedTools(c.listed), Hint: c.hint}
}

// CheckKey checks the key of a pending or disconnected login. A rejected key
// is ErrKeyRejected, an unreachable server ErrKeyUnchecked.
func (k Checker) CheckKey(ctx context.Context, connectionID, key string) (connections.Checked, error) {
	c, err := k.checkKey(ctx, connectionID, key)
	return c.forService(), err
}

// CheckValues checks a no-auth-with-config server's values. The engine checks
// them against the provider's fields (a *connectors.FieldsError names every
// missing or unknown one, or connectors.ErrNoConfig when the server takes
// none); the server's tools are then listed with the headers or environment
// the provider makes of them. A refusal is ErrConfigRejected, an unreachable
// server ErrConfigUnchecked.
func (k Checker) CheckValues(ctx context.Context, connectionID string, values map[string]string) (connections.Checked, error) {
	c, err := k.checkValues(ctx, connectionID, values)
	return c.forService(), err
}

func (k Checker) checkKey(ctx context.Context, connectionID, key string) (checked, error) {
	key = strings.TrimSpace(key)
	if key == "" {
		return checked{}, ErrKeyRejected
	}
	// Refused before the key is sent anywhere; the engine refuses it again
	// before storing (connectors.Engine.ConnectKey).
	if err := connectors.CheckKey(key); err != nil {
		return checked{}, &validation.Error{Problems: []validation.Problem{{Field: "key", Message: err.Error()}}}
	}
	info, err := (&Pool{o: Options{DB: k.DB}}).load(ctx, connectionID)
	if err != nil {
		return checked{}, err
	}
	c := checked{info: info, values: map[string]string{connectors.MetaTokenField: key}}
	if info.Kind == catalog.KindAdapter {
		c.listed, c.hint, err = k.checkAdapter(ctx, info, connectors.Credential{AccessToken: key})
		return c, err
	}
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

func (k Checker) checkValues(ctx context.Context, connectionID string, values map[string]string) (checked, error) {
	id, err := uuid.Parse(connectionID)
	if err != nil {
		return checked{}, store.ErrNotFound
	}
	info, err := (&Pool{o: Options{DB: k.DB}}).load(ctx, connectionID)
	if err != nil {
		return checked{}, err
	}
	if info.Kind == catalog.KindAdapter {
		// A multi-field key (catalog key_fields): the adapter checks every
		// field with its service, and gets them in Credential.Extra.
		if values, err = connections.CheckKeyFields(info.Slug, info.KeyFields, values); err != nil {
			return checked{}, err
		}
		c := checked{info: info, values: values}
		c.listed, c.hint, err = k.checkAdapter(ctx, info, connectors.Credential{Extra: values})
		return c, err
	}
	inj, err := k.Engine.CheckConfig(ctx, id, values)
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

// checkAdapter checks a local adapter's key (or keys) with the service
// itself (its ping) and answers the adapter's curated tools for that login
// and the account it named. A refusal naming one of several keys is a
// *KeyRejectedError.
func (k Checker) checkAdapter(ctx context.Context, info ServerInfo, cred connectors.Credential) ([]Tool, string, error) {
	a, err := adapters.Get(info.Adapter)
	if err != nil {
		return nil, "", err
	}
	actx, cancel := context.WithTimeout(ctx, AdapterTimeout)
	defer cancel()
	hint, err := a.Check(actx, adapters.Conn{HTTP: k.HTTP, BaseURL: info.URL, Cred: cred})
	var named rejectedField
	switch {
	case errors.As(err, &named) && adapters.Rejected(err):
		return nil, "", &KeyRejectedError{Field: named.RejectedField()}
	case adapters.Rejected(err):
		return nil, "", ErrKeyRejected
	case errors.Is(err, mcpoauth.ErrBlockedEndpoint):
		return nil, "", ErrAddressRefused
	case err != nil:
		k.log().Warn("adapter connect: key check failed", "server", info.Slug, "err", redactValues(withoutKey(err, cred.AccessToken), cred.Extra))
		return nil, "", ErrKeyUnchecked
	}
	listed, err := adapterTools(ctx, k.DB, info.ServerID, info.Slug)
	return offeredTools(a, cred, listed), hint, err
}

// KeyLogin checks a key or values (Checker) and stores the accepted ones with
// the listed tools, the connected state and the enabled binding
// (connections.StoreChecked): the connect service's key and values
// strategies for a caller that holds a pool.
type KeyLogin struct {
	DB     *pgxpool.Pool
	Engine *connectors.Engine
	Pool   *Pool        // its cached session of the login is dropped; may be nil
	HTTP   *http.Client // nil means http.DefaultClient
	Log    *slog.Logger
}

func (k KeyLogin) checker() Checker {
	return Checker{DB: k.DB, Engine: k.Engine, HTTP: k.HTTP, Log: k.Log}
}

// Connect checks and stores the key of a pending or disconnected login; a
// refused key stores nothing.
func (k KeyLogin) Connect(ctx context.Context, connectionID, key string) ([]Tool, error) {
	c, err := k.checker().checkKey(ctx, connectionID, key)
	if err != nil {
		return nil, err
	}
	return k.store(ctx, connectionID, c)
}

// ConnectConfig checks and stores a no-auth-with-config server's values;
// refused values store nothing.
func (k KeyLogin) ConnectConfig(ctx context.Context, connectionID string, values map[string]string) ([]Tool, error) {
	c, err := k.checker().checkValues(ctx, connectionID, values)
	if err != nil {
		return nil, err
	}
	return k.store(ctx, connectionID, c)
}

func (k KeyLogin) store(ctx context.Context, connectionID string, c checked) ([]Tool, error) {
	id, err := connstore.ParseID(connectionID)
	if err != nil {
		return nil, err
	}
	d := connections.Deps{DB: k.DB, Engine: k.Engine, Log: k.Log}
	if k.Pool != nil {
		d.Sessions = k.Pool
	}
	if _, err := connections.StoreChecked(ctx, d, id, c.forService()); err != nil {
		return nil, err
	}
	return c.listed, nil
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
