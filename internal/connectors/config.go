package connectors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/tools"
)

// No-auth-with-config connections: the server takes no login, but the
// operator fills in values the catalog row declares (ConfigProvider.Fields),
// which are stored sealed in Credential.Extra, with no access token and no
// expiry, and injected by the provider as headers or environment. See
// docs/adr/0203-no-auth-with-config.md.

// ErrNoConfig: the connection's server takes no configured values.
var ErrNoConfig = errors.New("connectors: the server takes no configured values")

// ErrCatalogConfig: the catalog row's provider refuses the row's
// configuration, so its connections cannot be connected until an admin
// fixes the row. The message says what is wrong with the row (never a value).
var ErrCatalogConfig = errors.New("its catalog configuration is refused")

func catalogRefused(slug string, err error) error {
	return fmt.Errorf("%s cannot be connected: %w: %w", label(slug), ErrCatalogConfig, err)
}

// maxConfigValue bounds one configured value (it travels in a header).
const maxConfigValue = 4096

// FieldProblem is what is wrong with one field of a connect form. It never
// holds the value.
type FieldProblem struct {
	Field   string
	Message string
}

// FieldsError refuses the values of a configuration connect, with every
// problem at once; nothing was stored.
type FieldsError struct {
	Server   string
	Problems []FieldProblem
}

func (e *FieldsError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Field + ": " + p.Message
	}
	return "values refused: " + strings.Join(parts, "; ")
}

// configProvider returns the binding's provider when it takes configured
// values. A key provider has the same methods but validates a key instead.
func (b *binding) configProvider() (ConfigProvider, bool) {
	if _, isKey := b.provider.(KeyProvider); isKey {
		return nil, false
	}
	cp, ok := b.provider.(ConfigProvider)
	return cp, ok
}

// checkValues keeps the values of the provider's fields, trimmed, and lists
// every missing, unknown or unusable one.
func checkValues(server string, fields []KeyField, values map[string]string) (map[string]string, error) {
	var probs []FieldProblem
	known := make(map[string]bool, len(fields))
	out := make(map[string]string, len(fields))
	for _, f := range fields {
		known[f.Name] = true
		v := strings.TrimSpace(values[f.Name])
		switch {
		case v == "" && !f.Optional:
			probs = append(probs, FieldProblem{f.Name, "is required"})
		case len(v) > maxConfigValue:
			probs = append(probs, FieldProblem{f.Name, fmt.Sprintf("is longer than %d bytes", maxConfigValue)})
		case strings.ContainsFunc(v, unicode.IsControl):
			probs = append(probs, FieldProblem{f.Name, "must not contain control characters or line breaks"})
		case v != "" && f.Secret && tools.CheckRedactable(v) != nil:
			// A secret value joins the login's redaction set.
			probs = append(probs, FieldProblem{f.Name, tools.CheckRedactable(v).Error()})
		case v != "":
			out[f.Name] = v
		}
	}
	var unknown []string
	for k := range values {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	slices.Sort(unknown)
	for _, k := range unknown {
		probs = append(probs, FieldProblem{k, "is not a field of " + label(server)})
	}
	if len(probs) > 0 {
		return nil, &FieldsError{Server: server, Problems: probs}
	}
	return out, nil
}

// CheckConfig checks the values of a no-auth-with-config connect without
// storing anything and returns how they would be injected, so the caller can
// try them against the server first. The error is ErrNoConfig when the
// server takes no values, a *FieldsError naming each refused field, or the
// catalog row's configuration error.
func (e *Engine) CheckConfig(ctx context.Context, id uuid.UUID, values map[string]string) (Injection, error) {
	if err := e.active(); err != nil {
		return Injection{}, err
	}
	rec, err := readRecord(ctx, e.db, id)
	if err != nil {
		return Injection{}, err
	}
	b := e.bindingFor(rec)
	if b.err != nil {
		return Injection{}, catalogRefused(rec.conn.ServerSlug, b.err)
	}
	cp, ok := b.configProvider()
	if !ok {
		return Injection{}, fmt.Errorf("%s: %w", rec.conn.ServerSlug, ErrNoConfig)
	}
	kept, err := checkValues(rec.conn.ServerSlug, cp.Fields(), values)
	if err != nil {
		return Injection{}, err
	}
	return cp.Inject(Credential{Extra: kept}), nil
}

// secrets lists the values of c to redact: all of them, except the values of
// fields a config provider declares non-secret.
func (b *binding) secrets(c Credential) []string {
	cp, ok := b.configProvider()
	if !ok {
		return c.values()
	}
	public := map[string]bool{}
	for _, f := range cp.Fields() {
		if !f.Secret {
			public[f.Name] = true
		}
	}
	if len(public) == 0 {
		return c.values()
	}
	kept := Credential{AccessToken: c.AccessToken, RefreshToken: c.RefreshToken, Extra: map[string]string{}}
	for k, v := range c.Extra {
		if !public[k] {
			kept.Extra[k] = v
		}
	}
	return kept.values()
}

// Secrets returns the values of one connection's credential to redact from
// what its tools answer (see RunSecrets). Nil when nothing is stored.
func (e *Engine) Secrets(ctx context.Context, id uuid.UUID) ([]string, error) {
	if err := e.active(); err != nil {
		return nil, nil
	}
	cred, err := e.res.Token(ctx, id)
	if err != nil {
		return nil, err
	}
	rec, err := readRecord(ctx, e.db, id)
	if err != nil {
		return nil, err
	}
	return e.bindingFor(rec).secrets(cred), nil
}
