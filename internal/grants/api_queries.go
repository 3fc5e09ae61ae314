package grants

import (
	"context"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
)

// ServerRoute is what a connect needs of a catalog row to choose how the
// login is made: its kind, auth and, for a local adapter, the adapter's name
// (config.adapter, "" when the config names none).
type ServerRoute struct {
	ID, Slug, Transport, URL string
	Kind                     catalog.Kind
	Auth                     catalog.Auth
	Adapter                  string
	// NoLogin: the server takes neither a login nor configured values
	// (catalog.NeedsNoLogin); connecting it is turning it on.
	NoLogin bool
}

// LoadServerRoute reads the catalog row a login belongs to.
func LoadServerRoute(ctx context.Context, db store.DB, serverID string) (ServerRoute, error) {
	var r ServerRoute
	var config []byte
	err := db.QueryRow(ctx, `SELECT id, slug, kind, transport, url, auth, config FROM mcp_servers WHERE id = $1`, serverID).
		Scan(&r.ID, &r.Slug, &r.Kind, &r.Transport, &r.URL, &r.Auth, &config)
	if err != nil {
		return ServerRoute{}, store.Map(err)
	}
	c, _ := catalog.ParseConfig(config) // lenient: a bad config names no adapter
	r.Adapter = c.Adapter
	r.NoLogin = catalog.NeedsNoLogin(r.Kind, r.Auth, c)
	return r, nil
}

// PublishedAdapterURL is the URL of the published catalog row served by the
// named adapter, preferring the row whose slug is the adapter's name
// (store.ErrNotFound when the catalog has none).
func PublishedAdapterURL(ctx context.Context, db store.DB, adapter string) (string, error) {
	rows, err := catalog.ServedBy(ctx, db, adapter)
	if err != nil {
		return "", err
	}
	url, found := "", false
	for _, r := range rows {
		if !r.Published {
			continue
		}
		if r.Slug == adapter {
			return r.URL, nil
		}
		if !found {
			url, found = r.URL, true
		}
	}
	if !found {
		return "", store.ErrNotFound
	}
	return url, nil
}

// RemoveFailedLogin deletes a login a connect created and could not finish;
// a login that got connected meanwhile is kept.
func RemoveFailedLogin(ctx context.Context, db store.DB, connectionID string) error {
	id, err := connstore.ParseID(connectionID)
	if err != nil {
		return err
	}
	return connstore.DeleteUnlessConnected(ctx, db, id)
}
