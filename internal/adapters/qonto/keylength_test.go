package qonto_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
	"github.com/guilds/guilds/internal/validation"
)

// Both halves of login:secret_key join the login's redaction set, so a half
// too short to redact is refused on the key field before the service is
// asked, with nothing stored and the key not echoed.
func TestAKeyWithAHalfTooShortToRedactIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := newService(t)
	e := adapterstest.New(t, "qonto", svc.URL)
	for _, key := range []string{"acme:" + secretKey, login + ":9f1c2"} {
		_, err := e.Login.Connect(ctx, e.ConnectionID, key)
		var v *validation.Error
		if !errors.As(err, &v) || v.Problems[0].Field != "key" || !strings.Contains(err.Error(), "each part") || strings.Contains(err.Error(), key) {
			t.Fatalf("%q: %v", key, err)
		}
	}
	if e.Stored(t) {
		t.Fatal("a refused key was stored")
	}
}
