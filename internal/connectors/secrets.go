package connectors

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/connstore"
)

// RunSecrets returns the credential values of every login an agent's run could
// reach: those owned at the platform, by the agent's organisation, by its guild
// and by the agent itself. They form the run's redaction set; the caller keeps
// them inside the activity that asked and never returns or logs them. Values
// of configuration fields declared non-secret are left out.
func (e *Engine) RunSecrets(ctx context.Context, agentID string) ([]string, error) {
	if err := e.active(); err != nil {
		return nil, nil // no connectors, nothing to redact
	}
	chain, err := connstore.OfAgentChain(ctx, e.db, agentID)
	if err != nil || len(chain) == 0 {
		return nil, err
	}
	ids := make([]uuid.UUID, len(chain))
	for i, c := range chain {
		ids[i] = c.ID.UUID()
	}
	rows, err := e.db.Query(ctx, `SELECT connection_id, ciphertext FROM connection_credentials WHERE connection_id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	sealed := map[uuid.UUID][]byte{}
	for rows.Next() {
		var id uuid.UUID
		var ct []byte
		if err := rows.Scan(&id, &ct); err != nil {
			return nil, err
		}
		sealed[id] = ct
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range chain {
		ct := sealed[c.ID.UUID()]
		if len(ct) == 0 {
			continue
		}
		cred, err := unseal(e.keys, c.ID.UUID(), ct)
		if err != nil {
			return nil, err
		}
		out = append(out, e.binding(c.Server.Slug, c.Server.Config).secrets(cred)...)
	}
	return out, nil
}

// values lists the non-empty secret values a credential holds.
func (c Credential) values() []string {
	var out []string
	for _, v := range []string{c.AccessToken, c.RefreshToken} {
		if v != "" {
			out = append(out, v)
		}
	}
	// A key made of two parts ("login:secret_key", as Qonto takes it) can
	// leak one part alone.
	if login, key, ok := strings.Cut(c.AccessToken, ":"); ok {
		for _, v := range []string{login, key} {
			if v != "" {
				out = append(out, v)
			}
		}
	}
	for _, v := range c.Extra {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// RefFromConfig names the provider and sub-service that serve a catalog row,
// from its slug and its config ({"provider", "sub_service"}).
func RefFromConfig(slug string, config []byte) Ref { return refFromConfig(slug, config) }
