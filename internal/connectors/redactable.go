package connectors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/guilds/guilds/internal/tools"
)

// CheckKey reports whether a pasted key may be stored: it joins its login's
// redaction set, so it must be long enough to redact (tools.CheckRedactable),
// and so must each part of a two-part key ("login:secret_key", as Qonto
// takes it), since the set holds the parts too (Credential.values). The
// message never contains the key.
func CheckKey(key string) error {
	if err := tools.CheckRedactable(key); err != nil {
		return err
	}
	if login, secret, ok := strings.Cut(key, ":"); ok {
		for _, part := range []string{login, secret} {
			if part != "" && tools.CheckRedactable(part) != nil {
				return fmt.Errorf("each part of a login:secret_key key must be at least %d characters, so that it can be redacted from tool results", tools.MinSecretLen)
			}
		}
	}
	return nil
}

// unredactable lists, by field, the values of c that would join the login's
// redaction set (binding.secrets) but are too short to be redacted. The
// key and the refresh token are the "token" field.
func (b *binding) unredactable(c Credential) []FieldProblem {
	var probs []FieldProblem
	for _, v := range []string{c.AccessToken, c.RefreshToken} {
		if v == "" {
			continue
		}
		if err := CheckKey(v); err != nil {
			probs = append(probs, FieldProblem{"token", err.Error()})
			break
		}
	}
	public := b.publicFields()
	names := make([]string, 0, len(c.Extra))
	for k := range c.Extra {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if v := c.Extra[k]; v != "" && !public[k] {
			if err := tools.CheckRedactable(v); err != nil {
				probs = append(probs, FieldProblem{k, err.Error()})
			}
		}
	}
	return probs
}

// publicFields are the fields a config provider declares non-secret: they
// stay out of redaction sets.
func (b *binding) publicFields() map[string]bool {
	public := map[string]bool{}
	if cp, ok := b.configProvider(); ok {
		for _, f := range cp.Fields() {
			if !f.Secret {
				public[f.Name] = true
			}
		}
	}
	return public
}
