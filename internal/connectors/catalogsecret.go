package connectors

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/sealed"
	"github.com/guilds/guilds/internal/secret"
)

// A catalog row's OAuth client secrets (config.oauth.client_secret, typed by
// the admin or returned by a registration, and the same key of each
// config.oauth.registrations entry) are stored sealed, as
// client_secret_sealed (base64), bound to the row's slug and the client id.
// Only the engine opens them, in memory, to configure the provider.

// SealedSecretKey is the config key of a sealed client secret.
const SealedSecretKey = "client_secret_sealed"

func catalogAAD(slug string, clientID json.RawMessage) []byte {
	var id string
	_ = json.Unmarshal(clientID, &id)
	return []byte("mcp_servers.config.client_secret\x00" + slug + "\x00" + id)
}

// SealCatalogSecrets replaces every clear client secret of a catalog row's
// config with its sealed form; "client_secret": "" removes the secret. A
// config without an oauth object is returned as it is.
func SealCatalogSecrets(kr *secret.Keyring, slug string, config json.RawMessage) (json.RawMessage, error) {
	return walkClients(config, func(c map[string]json.RawMessage) error {
		raw, has := c["client_secret"]
		if !has {
			return nil
		}
		delete(c, "client_secret")
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return fmt.Errorf("client_secret must be a string")
		}
		if s == "" {
			delete(c, SealedSecretKey)
			return nil
		}
		if kr == nil {
			return fmt.Errorf("client_secret cannot be stored: the box has no encryption key (GUILDS_ENCRYPTION_KEY)")
		}
		ct, err := kr.Seal([]byte(s), catalogAAD(slug, c["client_id"]))
		if err != nil {
			return err
		}
		c[SealedSecretKey], _ = json.Marshal(base64.StdEncoding.EncodeToString(ct))
		return nil
	})
}

// OpenCatalogSecrets returns the config with every sealed client secret
// opened back into client_secret, for the provider; never store the result.
func OpenCatalogSecrets(kr *secret.Keyring, slug string, config json.RawMessage) (json.RawMessage, error) {
	return walkClients(config, func(c map[string]json.RawMessage) error {
		ct, has, err := sealedSecret(c)
		if err != nil || !has {
			return err
		}
		if kr == nil {
			return fmt.Errorf("server %s: its OAuth client secret is sealed and the box has no encryption key", slug)
		}
		pt, err := kr.Open(ct, catalogAAD(slug, c["client_id"]))
		if err != nil {
			return fmt.Errorf("server %s: its OAuth client secret cannot be opened: %w", slug, err)
		}
		delete(c, SealedSecretKey)
		c["client_secret"], _ = json.Marshal(string(pt))
		return nil
	})
}

func sealedSecret(c map[string]json.RawMessage) ([]byte, bool, error) {
	raw, has := c[SealedSecretKey]
	if !has {
		return nil, false, nil
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return nil, false, fmt.Errorf("%s must be a string", SealedSecretKey)
	}
	ct, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, false, fmt.Errorf("%s is not base64", SealedSecretKey)
	}
	return ct, true, nil
}

// walkClients applies fn to config.oauth and to each entry of
// config.oauth.registrations, and re-encodes what changed.
func walkClients(config json.RawMessage, fn func(map[string]json.RawMessage) error) (json.RawMessage, error) {
	var row map[string]json.RawMessage
	if len(config) == 0 || json.Unmarshal(config, &row) != nil || row == nil {
		return config, nil
	}
	var oauth map[string]json.RawMessage
	if raw, ok := row["oauth"]; !ok || json.Unmarshal(raw, &oauth) != nil || oauth == nil {
		return config, nil
	}
	if err := fn(oauth); err != nil {
		return nil, err
	}
	if raw, ok := oauth["registrations"]; ok {
		var regs map[string]map[string]json.RawMessage
		if json.Unmarshal(raw, &regs) == nil {
			for _, r := range regs {
				if r == nil {
					continue
				}
				if err := fn(r); err != nil {
					return nil, err
				}
			}
			oauth["registrations"], _ = json.Marshal(regs)
		}
	}
	row["oauth"], _ = json.Marshal(oauth)
	out, _ := json.Marshal(row)
	return out, nil
}

// catalogTable names the catalog's sealed client secrets in rotation reports.
const catalogTable = "mcp_servers.config client secrets"

// rotateCatalog re-seals the catalog's client secrets not under the active
// key, and seals any still stored in clear (rows written before they were
// sealed). It counts values, not rows.
func rotateCatalog(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring) (sealed.Rotation, error) {
	tr := sealed.Rotation{Table: catalogTable}
	active := kr.ActiveKeyID()
	err := pgx.BeginFunc(ctx, db, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT id::text, slug, config FROM mcp_servers WHERE config ? 'oauth' FOR UPDATE`)
		if err != nil {
			return err
		}
		type row struct {
			id, slug string
			cfg      json.RawMessage
		}
		var all []row
		for rows.Next() {
			var r row
			if err := rows.Scan(&r.id, &r.slug, &r.cfg); err != nil {
				rows.Close()
				return err
			}
			all = append(all, r)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		for _, r := range all {
			changed := false
			out, err := walkClients(r.cfg, func(c map[string]json.RawMessage) error {
				if raw, inClear := c["client_secret"]; inClear && string(raw) != `""` {
					sealed, err := SealCatalogSecrets(kr, r.slug, joinClient(c))
					if err != nil {
						return err
					}
					copyClient(c, sealed)
					tr.Resealed, changed = tr.Resealed+1, true
					return nil
				}
				ct, has, err := sealedSecret(c)
				if err != nil || !has {
					return err
				}
				kid, err := secret.KeyID(ct)
				switch {
				case err != nil:
					return fmt.Errorf("server %s: %w", r.slug, err)
				case kid == active:
					tr.Current++
					return nil
				case !kr.Has(kid):
					tr.Remaining++
					if tr.Unknown == nil {
						tr.Unknown = map[string]int{}
					}
					tr.Unknown[kid]++
					return nil
				}
				aad := catalogAAD(r.slug, c["client_id"])
				pt, err := kr.Open(ct, aad)
				if err != nil {
					return fmt.Errorf("server %s: %w", r.slug, err)
				}
				nct, err := kr.Seal(pt, aad)
				clear(pt)
				if err != nil {
					return err
				}
				c[SealedSecretKey], _ = json.Marshal(base64.StdEncoding.EncodeToString(nct))
				tr.Resealed, changed = tr.Resealed+1, true
				return nil
			})
			if err != nil {
				return err
			}
			if changed {
				if _, err := tx.Exec(ctx, `UPDATE mcp_servers SET config = $2 WHERE id = $1::uuid`, r.id, out); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return tr, err
}

// joinClient wraps one client object as a config for SealCatalogSecrets.
func joinClient(c map[string]json.RawMessage) json.RawMessage {
	o, _ := json.Marshal(c)
	out, _ := json.Marshal(map[string]json.RawMessage{"oauth": o})
	return out
}

func copyClient(c map[string]json.RawMessage, config json.RawMessage) {
	var row struct {
		OAuth map[string]json.RawMessage `json:"oauth"`
	}
	_ = json.Unmarshal(config, &row)
	for k := range c {
		delete(c, k)
	}
	for k, v := range row.OAuth {
		c[k] = v
	}
}

// catalogKeyIDs counts the catalog's sealed client secrets per key id.
func catalogKeyIDs(ctx context.Context, db *pgxpool.Pool) (map[string]int, error) {
	rows, err := db.Query(ctx, `SELECT config FROM mcp_servers WHERE config ? 'oauth'`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var cfg json.RawMessage
		if err := rows.Scan(&cfg); err != nil {
			return nil, err
		}
		_, _ = walkClients(cfg, func(c map[string]json.RawMessage) error {
			if ct, has, _ := sealedSecret(c); has {
				if kid, err := secret.KeyID(ct); err == nil {
					out[kid]++
				}
			}
			return nil
		})
	}
	return out, rows.Err()
}
