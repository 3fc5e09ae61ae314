package qonto_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
	"github.com/guilds/guilds/internal/adapters/qonto/qontotest"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/validation"
)

// The login and the secret key each join the login's redaction set, so one
// too short to redact is refused on its own field before the service is
// asked, with nothing stored and the value not echoed; so is a missing one.
func TestAFieldTooShortToRedactIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := qontotest.New(t)
	e := adapterstest.New(t, "qonto", svc.URL)
	n := svc.Count()
	for field, values := range map[string]map[string]string{
		"values.login":      {"login": "acme", "secret_key": secretKey},
		"values.secret_key": {"login": login, "secret_key": "9f1c2"},
	} {
		_, err := e.ConnectValues(ctx, values)
		var v *validation.Error
		if !errors.As(err, &v) || v.Problems[0].Field != field || strings.Contains(err.Error(), values["login"]+":") {
			t.Fatalf("%s: %v", field, err)
		}
	}
	_, err := e.ConnectValues(ctx, map[string]string{"login": login})
	var v *validation.Error
	if !errors.As(err, &v) || v.Problems[0].Field != "values.secret_key" || errors.Is(err, connections.ErrKeyRejected) {
		t.Fatalf("missing secret_key: %v", err)
	}
	// The old single key is no longer taken for a row with key fields.
	if _, err := e.ConnectValues(ctx, map[string]string{"token": goodKey}); !errors.As(err, &v) ||
		!strings.Contains(err.Error(), "values.token") || strings.Contains(err.Error(), secretKey) {
		t.Fatalf("a single key: %v", err)
	}
	if svc.Count() != n || e.Stored(t) {
		t.Fatal("a refused login reached the service or was stored")
	}
}
