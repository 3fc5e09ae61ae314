package connectors_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// TestTransportDropsCredentialOnCrossHostRedirect: the resolver's transport
// injects a login's headers into every request of its client, but not into
// a redirect that leaves the original host.
func TestTransportDropsCredentialOnCrossHostRedirect(t *testing.T) {
	e := newEnv(t)
	e.addServer(t, "acme")
	id := e.addConnection(t, "acme")
	eng := e.engine(t, engineOpts{redisURL: "-"})
	e.connect(t, eng, id)

	var got atomic.Pointer[string]
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get("Authorization")
		got.Store(&v)
	}))
	t.Cleanup(other.Close)
	var originAuth atomic.Pointer[string]
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := r.Header.Get("Authorization")
		originAuth.Store(&v)
		http.Redirect(w, r, other.URL+"/landed", http.StatusFound)
	}))
	t.Cleanup(origin.Close)

	c := &http.Client{Transport: eng.Resolver().Transport(nil, id)}
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, origin.URL+"/start", nil)
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if p := originAuth.Load(); p == nil || *p == "" {
		t.Fatal("the original host got no credential; the test proves nothing")
	}
	if p := got.Load(); p == nil || *p != "" {
		t.Fatalf("the other host got Authorization %v", p)
	}
}
