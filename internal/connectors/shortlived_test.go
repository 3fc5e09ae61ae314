package connectors_test

import (
	"context"
	"testing"
)

// TestShortLivedTokenIsNotRefreshedOnEveryLookup: a token that lives less
// than the default 15 s skew is served for most of its life (the skew is a
// quarter of it), not refreshed on every lookup.
func TestShortLivedTokenIsNotRefreshedOnEveryLookup(t *testing.T) {
	e := newEnv(t)
	e.addServer(t, "acme")
	id := e.addConnection(t, "acme")
	eng := e.engine(t, engineOpts{redisURL: "-"})
	e.ts.mu.Lock()
	e.ts.expiresIn = 10
	e.ts.mu.Unlock()
	e.connect(t, eng, id)
	ctx := context.Background()
	first, err := eng.Resolver().Token(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		c, err := eng.Resolver().Token(ctx, id)
		if err != nil || c.AccessToken != first.AccessToken {
			t.Fatalf("lookup: %v (token changed: %v)", err, c.AccessToken != first.AccessToken)
		}
	}
	if n := e.ts.refreshes.Load(); n != 0 {
		t.Fatalf("a 10 s token was refreshed %d times by 6 lookups", n)
	}
}
