package models

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/internal/validation"
)

// ErrNoKeyring: the box has no encryption key, so organisation keys cannot be stored.
var ErrNoKeyring = errors.New("the box has no encryption key (GUILDS_ENCRYPTION_KEY): organisation model keys cannot be stored")

// aad binds a sealed key to its organisation and provider, so a ciphertext
// copied onto another row does not open.
func aad(orgID, providerName string) []byte {
	return []byte("organisation_model_keys:" + orgID + ":" + providerName)
}

// SetOrgKey stores (or replaces) an organisation's key for a provider.
func SetOrgKey(ctx context.Context, db store.DB, kr *secret.Keyring, orgID, providerName, key string) error {
	key = strings.TrimSpace(key)
	var probs validation.Problems
	probs.Check(Known(providerName), "provider", "must be one of %s", strings.Join(Names(), ", "))
	probs.Check(key != "", "key", "is required")
	if key != "" {
		// A shorter key would be left out of the runs' redaction set.
		if err := tools.CheckRedactable(key); err != nil {
			probs.Add("key", "%s", err.Error())
		}
	}
	probs.Check(len(key) <= 4096, "key", "must be at most 4096 characters")
	if err := probs.Err(); err != nil {
		return err
	}
	if kr == nil {
		return ErrNoKeyring
	}
	ct, err := kr.Seal([]byte(key), aad(orgID, providerName))
	if err != nil {
		return err
	}
	_, err = db.Exec(ctx, `INSERT INTO organisation_model_keys (organisation_id, provider, key_id, ciphertext)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (organisation_id, provider) DO UPDATE
		SET key_id = excluded.key_id, ciphertext = excluded.ciphertext, updated_at = now()`,
		orgID, providerName, kr.ActiveKeyID(), ct)
	return store.Map(err)
}

// DeleteOrgKey removes an organisation's key; ErrNotFound when there was none.
func DeleteOrgKey(ctx context.Context, db store.DB, orgID, providerName string) error {
	tag, err := db.Exec(ctx, `DELETE FROM organisation_model_keys WHERE organisation_id = $1 AND provider = $2`,
		orgID, providerName)
	if err != nil {
		return store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		return store.ErrNotFound
	}
	return nil
}

// OrgKeyProviders reports which providers an organisation holds a key for.
func OrgKeyProviders(ctx context.Context, db store.DB, orgID string) (map[string]bool, error) {
	rows, err := db.Query(ctx, `SELECT provider FROM organisation_model_keys WHERE organisation_id = $1`, orgID)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, err
		}
		out[p] = true
	}
	return out, store.Map(rows.Err())
}

// AnyOrgKey reports whether one of the organisations (every organisation
// when all is set) holds a model key.
func AnyOrgKey(ctx context.Context, db store.DB, orgIDs []string, all bool) (bool, error) {
	var any bool
	err := db.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM organisation_model_keys
		WHERE $2 OR organisation_id::text = ANY($1::text[]))`, orgIDs, all).Scan(&any)
	return any, store.Map(err)
}

// OrgKey opens an organisation's key for a provider; ErrNotFound when there is none.
func OrgKey(ctx context.Context, db store.DB, kr *secret.Keyring, orgID, providerName string) (string, error) {
	var ct []byte
	err := db.QueryRow(ctx, `SELECT ciphertext FROM organisation_model_keys WHERE organisation_id = $1 AND provider = $2`,
		orgID, providerName).Scan(&ct)
	if err != nil {
		return "", store.Map(err)
	}
	if kr == nil {
		return "", ErrNoKeyring
	}
	pt, err := kr.Open(ct, aad(orgID, providerName))
	if err != nil {
		// secret.ErrUnknownKey stays matchable: the API answers 503, a run fails with the remedy.
		return "", fmt.Errorf("the organisation's %s model key: %w", providerName, err)
	}
	return string(pt), nil
}
