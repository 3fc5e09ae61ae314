package grants

import (
	"context"
	"encoding/json"
	"net/url"
	"strings"

	"github.com/guilds/guilds/internal/catalog"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// checkTokenDestinations refuses a catalog change that would send the
// stored credentials of existing logins to another host: a new origin for
// the server's URL (every call carries the login's token) or for its OAuth
// token or revocation endpoints (refresh tokens, client
// secrets). The admin disconnects those logins first, or adds a new catalog
// row (docs/adr/0607-catalog-host-change.md). A path change on the same
// origin, and any change while no login holds a credential, is accepted.
func checkTokenDestinations(ctx context.Context, db store.DB, cur Server, stored json.RawMessage, newURL *string, newConfig json.RawMessage) error {
	var moved []string
	if newURL != nil && origin(*newURL) != origin(cur.URL) {
		moved = append(moved, "url")
	}
	if len(newConfig) > 0 {
		// Lenient: an endpoint that is not a string counts as unset, as before.
		b, _ := catalog.ParseConfig(stored)
		a, _ := catalog.ParseConfig(newConfig)
		for _, f := range []struct{ name, before, after string }{
			{"token_url", b.OAuth.TokenURL, a.OAuth.TokenURL},
			{"revoke_url", b.OAuth.RevokeURL, a.OAuth.RevokeURL},
		} {
			if origin(f.before) != origin(f.after) && f.before != "" {
				moved = append(moved, "config.oauth."+f.name)
			}
		}
	}
	if len(moved) == 0 {
		return nil
	}
	n, err := connstore.CountWithCredentials(ctx, db, cur.ID)
	if err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	var p validation.Problems
	for _, f := range moved {
		p.Add(f, "cannot move to another host while %d login(s) hold credentials for this server: their tokens would be sent there; disconnect them first, or add the new host as another catalog server", n)
	}
	return p.Err()
}

// origin is scheme://host:port, lower case ("" for "").
func origin(raw string) string {
	if raw == "" {
		return ""
	}
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}
