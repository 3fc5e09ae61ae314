package connectors

import (
	"context"
	"strings"

	"github.com/google/uuid"
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
	rows, err := e.db.Query(ctx, `
		SELECT cc.connection_id, cc.ciphertext, s.slug, s.config
		FROM agent_chain_logins l
		JOIN connection_credentials cc ON cc.connection_id = l.connection_id
		JOIN mcp_connections c ON c.id = l.connection_id
		JOIN mcp_servers s ON s.id = c.server_id
		WHERE l.agent_id = $1`, agentID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id uuid.UUID
		var ct, cfg []byte
		var slug string
		if err := rows.Scan(&id, &ct, &slug, &cfg); err != nil {
			return nil, err
		}
		if len(ct) == 0 {
			continue
		}
		cred, err := unseal(e.keys, id, ct)
		if err != nil {
			return nil, err
		}
		out = append(out, e.binding(slug, cfg).secrets(cred)...)
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
