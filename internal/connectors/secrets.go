package connectors

import (
	"context"

	"github.com/google/uuid"
)

// RunSecrets returns the credential values of every login an agent's run could
// reach: those owned at the platform, by the agent's organisation, by its guild
// and by the agent itself. They form the run's redaction set; the caller keeps
// them inside the activity that asked and never returns or logs them.
func (e *Engine) RunSecrets(ctx context.Context, agentID string) ([]string, error) {
	if err := e.active(); err != nil {
		return nil, nil // no connectors, nothing to redact
	}
	rows, err := e.db.Query(ctx, `
		SELECT cc.connection_id, cc.ciphertext
		FROM agent_chain_logins l
		JOIN connection_credentials cc ON cc.connection_id = l.connection_id
		WHERE l.agent_id = $1`, agentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id uuid.UUID
		var ct []byte
		if err := rows.Scan(&id, &ct); err != nil {
			return nil, err
		}
		if len(ct) == 0 {
			continue
		}
		cred, err := unseal(e.keys, id, ct)
		if err != nil {
			return nil, err
		}
		out = append(out, cred.values()...)
	}
	return out, rows.Err()
}

// values lists the non-empty secret values a credential holds.
func (c Credential) values() []string {
	var out []string
	for _, v := range []string{c.AccessToken, c.RefreshToken} {
		if v != "" {
			out = append(out, v)
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
