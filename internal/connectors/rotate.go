package connectors

import (
	"context"
	"encoding/hex"
	"log/slog"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/sealed"
	"github.com/guilds/guilds/internal/secret"
)

// Names of the connector engine's sets of sealed values in rotation reports.
const (
	CredentialsTable = "connection_credentials"
	PendingTable     = "connection_oauth_pending"
)

// SealedSets are the engine's own sealed values, for the platform's
// sealed.Registry: the logins' credentials, the pending OAuth logins'
// verifiers and authorization URLs, and the catalog's client secrets.
func SealedSets() []sealed.Set {
	return []sealed.Set{
		sealed.Table{
			Table: CredentialsTable, PK: []string{"connection_id::text"}, Match: "connection_id = $1::uuid",
			Cols: []string{"ciphertext"},
			AAD: func(pk []string, _ string) ([]byte, error) {
				id, err := uuid.Parse(pk[0])
				return credAAD(id), err
			},
		},
		sealed.Table{
			Table: PendingTable, PK: []string{"encode(state_hash, 'hex')"}, Match: "state_hash = decode($1, 'hex')",
			Cols: []string{"verifier", "authorization_url"},
			AAD: func(pk []string, col string) ([]byte, error) {
				sh, err := hex.DecodeString(pk[0])
				if col == "authorization_url" {
					return authURLAAD(sh), err
				}
				return sh, err
			},
		},
		catalogSecrets{},
	}
}

// catalogSecrets are the client secrets sealed inside the catalog's config
// column: one value per registered client, each with the key id in its
// ciphertext, so they rotate in one transaction rather than by key_id.
type catalogSecrets struct{}

func (catalogSecrets) Name() string { return catalogTable }

func (catalogSecrets) Rotate(ctx context.Context, db *pgxpool.Pool, kr *secret.Keyring, _ int, _ *slog.Logger) (sealed.Rotation, error) {
	return rotateCatalog(ctx, db, kr)
}

func (catalogSecrets) KeyIDs(ctx context.Context, db *pgxpool.Pool) (map[string]int, error) {
	return catalogKeyIDs(ctx, db)
}
