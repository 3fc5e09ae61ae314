package grants

import "encoding/json"

// A catalog row's config may hold an OAuth client secret: one the admin typed
// or one a dynamic registration returned (internal/mcpoauth stores it under
// "oauth"). The API shows whether it is set, never its value, and an admin who
// sends back the config they read keeps the stored secret.

const secretSetKey = "client_secret_set"

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
	if _, has := oauth["client_secret"]; has {
		delete(oauth, "client_secret")
		oauth[secretSetKey] = json.RawMessage(`true`)
	}
	return joinOAuth(row, oauth)
}

// redactRegistrations does to every client Connect registered (one per
// redirect URI) what redactConfig does to the row's client.
func redactRegistrations(raw json.RawMessage) (json.RawMessage, bool) {
	var regs map[string]map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &regs) != nil {
		return nil, false
	}
	for _, r := range regs {
		if _, has := r["client_secret"]; has {
			delete(r, "client_secret")
			r[secretSetKey] = json.RawMessage(`true`)
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
	if _, has := oauth["client_secret"]; !has {
		if _, old, ok := splitOAuth(stored); ok {
			if sec, has := old["client_secret"]; has && string(old["client_id"]) == string(oauth["client_id"]) {
				oauth["client_secret"] = sec
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
