package connectors_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/connectors"
)

// TestRefreshAheadServesWhileRefreshing: a connection in use is refreshed in
// the background before its token goes stale. While the token endpoint holds
// that refresh, callers keep getting the current token at once; afterwards
// they get the new one, and the endpoint saw one request.
func TestRefreshAheadServesWhileRefreshing(t *testing.T) {
	e := newEnv(t)
	e.addServer(t, "acme")
	id := e.addConnection(t, "acme")
	// Sixteen-second tokens, refreshed from eight seconds before expiry; half
	// the lifetime is the earliest refresh, so the refresh is due at about 8s
	// and the token stays servable until 16s: the calls made while the
	// refresh is held have eight seconds, a wide margin on a loaded machine.
	eng := e.engine(t, engineOpts{redisURL: "-", timing: connectors.Timing{Skew: -1, RefreshAhead: 8 * time.Second,
		Lease: 20 * time.Second, RefreshTimeout: 10 * time.Second}})
	e.ts.mu.Lock()
	e.ts.expiresIn = 16
	e.ts.mu.Unlock()
	e.connect(t, eng, id)
	e.ts.mu.Lock()
	e.ts.expiresIn = 3600
	e.ts.mu.Unlock()

	ctx := context.Background()
	first, err := eng.Resolver().Token(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	arrived, release := make(chan struct{}, 1), make(chan struct{})
	e.ts.mode = func(w http.ResponseWriter, r *http.Request) bool {
		arrived <- struct{}{}
		<-release
		return false // then answer normally
	}
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()

	// call must not wait for the refresh: the bound only turns a caller
	// blocked on the token endpoint into a failure instead of a hang.
	call := func(what string) connectors.Credential {
		t.Helper()
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		c, err := eng.Resolver().Token(cctx, id)
		if err != nil {
			t.Fatalf("%s: a caller waited for the refresh instead of being served: %v", what, err)
		}
		return c
	}
	deadline := time.After(20 * time.Second)
wait:
	for {
		select {
		case <-arrived:
			break wait
		case <-deadline:
			t.Fatal("no refresh ahead of expiry")
		case <-time.After(20 * time.Millisecond):
			if c := call("before the refresh"); c.AccessToken != first.AccessToken {
				t.Fatal("token changed before any refresh")
			}
		}
	}
	// The refresh is in flight and held: the current token is still served.
	for range 5 {
		if c := call("during the refresh"); c.AccessToken != first.AccessToken {
			t.Fatal("token changed while the refresh was held")
		}
	}
	close(release)
	waitFor(t, "the refreshed token", func() bool {
		c, err := eng.Resolver().Token(ctx, id)
		return err == nil && c.AccessToken != first.AccessToken
	})
	if n := e.ts.requests.Load(); n != 1 {
		t.Fatalf("token endpoint saw %d refresh requests, want 1", n)
	}
	conn, err := eng.Get(ctx, id)
	if err != nil || conn.Health.State != connectors.HealthHealthy {
		t.Fatalf("after refresh ahead: %+v %v", conn.Health, err)
	}
}
