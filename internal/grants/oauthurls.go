package grants

import (
	"encoding/json"
	"strings"

	"github.com/guilds/guilds/internal/validation"
)

// oauthURLFields are the endpoints of a catalog row's config.oauth that the
// platform calls (or sends a browser to) with the outbound policy's client.
var oauthURLFields = []string{"auth_url", "token_url", "revoke_url", "userinfo_url", "issuer"}

// checkOAuthURLs refuses, field by field, a config.oauth URL the outbound
// policy would refuse at dial time, so the admin hears it on save rather
// than at the first connect or refresh. Registrations stored by Connect
// (config.oauth.registrations) are the platform's own writes and were
// checked when they were discovered.
func checkOAuthURLs(p *validation.Problems, config json.RawMessage, checkURL URLCheck) {
	var row struct {
		OAuth map[string]json.RawMessage `json:"oauth"`
	}
	if json.Unmarshal(config, &row) != nil || row.OAuth == nil {
		return
	}
	for _, f := range oauthURLFields {
		raw, ok := row.OAuth[f]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			p.Add("config.oauth."+f, "must be a string")
			continue
		}
		if s == "" {
			continue
		}
		if !strings.HasPrefix(s, "https://") && !strings.HasPrefix(s, "http://") {
			p.Add("config.oauth."+f, "must be an http(s) URL")
			continue
		}
		if checkURL != nil {
			if err := checkURL(s); err != nil {
				p.Add("config.oauth."+f, "is refused: %v", err)
			}
		}
	}
}
