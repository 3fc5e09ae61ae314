package coingecko_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/adapters/adapterstest"
	"github.com/guilds/guilds/internal/adapters/host"
)

// A call the service never answers ends at the pool's adapter timeout with a
// message naming it, and the login's next call works.
func TestAdapterTimeoutEndsTheCall(t *testing.T) {
	ctx := context.Background()
	f := newFakeGecko(t)
	var stall atomic.Bool
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if stall.Load() {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		f.serve(w, r)
	}))
	t.Cleanup(func() { close(release); slow.Close() })
	e := adapterstest.NewWithHost(t, "coingecko", slow.URL, host.Options{Timeout: 200 * time.Millisecond})
	if _, err := e.Connect(ctx, goodKey); err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"ids":["bitcoin"]}`)

	stall.Store(true)
	_, err := e.Host.Call(ctx, e.ConnectionID, "prices", args)
	if err == nil || err.Error() != "coingecko: HTTP request did not answer within 200ms" {
		t.Fatalf("slow call: %v", err)
	}
	stall.Store(false)
	out, err := e.Host.Call(ctx, e.ConnectionID, "prices", args)
	if err != nil || !strings.Contains(out, "\nbitcoin\t67187\t") {
		t.Fatalf("the call after the slow one: %q %v", out, err)
	}
}
