package grants

import (
	"encoding/json"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/validation"
)

// A catalog row's config may hold an OAuth client secret: one the admin typed
// or one a dynamic registration returned (internal/mcpoauth stores it under
// "oauth"). The API shows whether it is set, never its value, and an admin who
// sends back the config they read keeps the stored secret.

const secretSetKey = "client_secret_set"

// sealedSecretKey marks a secret stored sealed (connectors.SealCatalogSecrets).
const sealedSecretKey = connectors.SealedSecretKey

// redactConfig returns config with oauth.client_secret replaced by
// oauth.client_secret_set: true.
func redactConfig(config json.RawMessage) json.RawMessage {
	row, oauth, ok := splitOAuth(config)
	if !ok {
		return config
	}
	if regs, ok := redactRegistrations(oauth["registrations"]); ok {
		oauth["registrations"] = regs
	}
	hideSecret(oauth)
	return joinOAuth(row, oauth)
}

// hideSecret replaces a client's secret, clear or sealed, by client_secret_set.
func hideSecret(c map[string]json.RawMessage) {
	_, clear := c["client_secret"]
	_, sealed := c[sealedSecretKey]
	if clear || sealed {
		delete(c, "client_secret")
		delete(c, sealedSecretKey)
		c[secretSetKey] = json.RawMessage(`true`)
	}
}

// redactRegistrations does to every client Connect registered (one per
// redirect URI) what redactConfig does to the row's client.
func redactRegistrations(raw json.RawMessage) (json.RawMessage, bool) {
	var regs map[string]map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &regs) != nil {
		return nil, false
	}
	for _, r := range regs {
		if r != nil {
			hideSecret(r)
		}
	}
	out, _ := json.Marshal(regs)
	return out, true
}

// keepSecret prepares an admin's new config for storage: the display-only
// client_secret_set is dropped, and when the new oauth object names no
// client_secret for the same client_id, the stored secret is carried over.
// Sending "client_secret": "" removes it.
func keepSecret(stored, next json.RawMessage) json.RawMessage {
	row, oauth, ok := splitOAuth(next)
	if !ok {
		return next
	}
	delete(oauth, secretSetKey)
	// Registrations are Connect's own writes: the stored ones are kept
	// whatever the admin sends back (their secrets were shown redacted).
	delete(oauth, "registrations")
	if _, old, ok := splitOAuth(stored); ok {
		if regs, has := old["registrations"]; has {
			oauth["registrations"] = regs
		}
	}
	delete(oauth, sealedSecretKey) // only the stored one is trusted
	if _, has := oauth["client_secret"]; !has {
		if _, old, ok := splitOAuth(stored); ok && string(old["client_id"]) == string(oauth["client_id"]) {
			for _, k := range []string{"client_secret", sealedSecretKey} {
				if sec, has := old[k]; has {
					oauth[k] = sec
				}
			}
		}
	}
	return joinOAuth(row, oauth)
}

func splitOAuth(config json.RawMessage) (row, oauth map[string]json.RawMessage, ok bool) {
	if err := json.Unmarshal(config, &row); err != nil || row == nil {
		return nil, nil, false
	}
	raw, has := row["oauth"]
	if !has {
		return nil, nil, false
	}
	if err := json.Unmarshal(raw, &oauth); err != nil || oauth == nil {
		return nil, nil, false
	}
	return row, oauth, true
}

func joinOAuth(row, oauth map[string]json.RawMessage) json.RawMessage {
	o, _ := json.Marshal(oauth)
	row["oauth"] = o
	out, _ := json.Marshal(row)
	return out
}

// SecretSealer seals the client secrets of a catalog row's config before it
// is stored (connectors.SealCatalogSecrets with the box's keyring).
type SecretSealer func(slug string, config json.RawMessage) (json.RawMessage, error)

func sealConfig(seal SecretSealer, slug string, config json.RawMessage) (json.RawMessage, error) {
	if seal == nil || len(config) == 0 {
		return config, nil
	}
	out, err := seal(slug, config)
	if err != nil {
		var p validation.Problems
		p.Add("config.oauth.client_secret", "%v", err)
		return nil, p.Err()
	}
	return out, nil
}
