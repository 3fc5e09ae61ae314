package host

import (
	"context"
	"errors"
	"strings"

	"github.com/guilds/guilds/internal/adapters"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/mcpoauth"
)

// CheckKey checks a key of a pending or disconnected adapter login with the
// service itself (the adapter's ping) before anything is stored, and answers
// the curated tools the adapter offers with it and the account the service
// named. A refused key is connections.ErrKeyRejected, an unreachable service
// connections.ErrKeyUnchecked (connections.Checker).
func (h *Host) CheckKey(ctx context.Context, row connstore.Connection, key string) (connections.Checked, error) {
	key, err := connections.TrimKey(key)
	if err != nil {
		return connections.Checked{}, err
	}
	l, err := fromRow(row)
	if err != nil {
		return connections.Checked{}, err
	}
	return h.checkValues(ctx, l, map[string]string{connectors.MetaTokenField: key}, connectors.Credential{AccessToken: key})
}

// CheckValues checks a multi-field key (catalog key_fields) with the
// service: every field is checked against the row's fields first, then the
// adapter gets them all in Credential.Extra. A refusal naming one of them is
// a *connections.KeyRejectedError.
func (h *Host) CheckValues(ctx context.Context, row connstore.Connection, values map[string]string) (connections.Checked, error) {
	l, err := fromRow(row)
	if err != nil {
		return connections.Checked{}, err
	}
	if values, err = connections.CheckKeyFields(l.slug, l.keyFields, values); err != nil {
		return connections.Checked{}, err
	}
	return h.checkValues(ctx, l, values, connectors.Credential{Extra: values})
}

// CheckOpen: an adapter always takes a login (catalog.NeedsNoLogin is for
// remote servers only).
func (h *Host) CheckOpen(context.Context, connstore.Connection) (connections.Checked, error) {
	return connections.Checked{}, errors.New("a local adapter's login always takes a key or a browser login")
}

// rejectedField is an adapter's refusal that names which of a login's
// several keys the service refused (the Wallet's).
type rejectedField interface {
	RejectedField() string
}

func (h *Host) checkValues(ctx context.Context, l login, values map[string]string, cred connectors.Credential) (connections.Checked, error) {
	actx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	hint, err := l.adapter.Check(actx, adapters.Conn{HTTP: h.o.HTTP, BaseURL: l.url, Cred: cred})
	var named rejectedField
	switch {
	case errors.As(err, &named) && adapters.Rejected(err):
		return connections.Checked{}, &connections.KeyRejectedError{Field: named.RejectedField()}
	case adapters.Rejected(err):
		return connections.Checked{}, connections.ErrKeyRejected
	case errors.Is(err, mcpoauth.ErrBlockedEndpoint):
		return connections.Checked{}, connections.ErrAddressRefused
	case err != nil:
		msg := connectors.Scrub(err, cred).Error()
		h.log.Warn("adapter connect: key check failed", "server", l.slug, "err", strings.Join(strings.Fields(msg), " "))
		return connections.Checked{}, connections.ErrKeyUnchecked
	}
	listed, err := grants.CatalogTools(ctx, h.o.DB, l.Server.ID.String())
	if err != nil {
		return connections.Checked{}, err
	}
	return connections.Checked{Values: values, Listed: offered(l.adapter, cred, listed), Hint: hint}, nil
}
