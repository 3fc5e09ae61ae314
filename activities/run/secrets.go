package run

import (
	"context"

	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
)

// Secrets joins several sources into one redaction set.
type Secrets []SecretSource

// RunSecrets concatenates what every source returns.
func (s Secrets) RunSecrets(ctx context.Context, agentID string) ([]string, error) {
	var out []string
	for _, src := range s {
		if src == nil {
			continue
		}
		vals, err := src.RunSecrets(ctx, agentID)
		if err != nil {
			return nil, err
		}
		out = append(out, vals...)
	}
	return out, nil
}

// StaticSecrets are values known at start-up, such as the box's integration keys.
type StaticSecrets []string

// RunSecrets returns the fixed values.
func (s StaticSecrets) RunSecrets(context.Context, string) ([]string, error) { return s, nil }

// ModelKeySecrets are the model keys the agent's organisation stored.
type ModelKeySecrets struct {
	DB      store.DB
	Keyring *secret.Keyring
}

// RunSecrets decrypts the organisation's model keys.
func (m ModelKeySecrets) RunSecrets(ctx context.Context, agentID string) ([]string, error) {
	if m.Keyring == nil {
		return nil, nil
	}
	a, err := orgs.LoadAgent(ctx, m.DB, agentID)
	if err != nil {
		return nil, err
	}
	providers, err := models.OrgKeyProviders(ctx, m.DB, a.OrganisationID)
	if err != nil {
		return nil, err
	}
	var out []string
	for name, has := range providers {
		if !has {
			continue
		}
		key, err := models.OrgKey(ctx, m.DB, m.Keyring, a.OrganisationID, name)
		if err != nil {
			return nil, err
		}
		if key != "" {
			out = append(out, key)
		}
	}
	return out, nil
}
