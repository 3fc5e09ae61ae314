package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
)

// connectAcmeKillingCallback connects the acme login with the browser's
// return from the authorization server landing on the API replica victim
// (at victimAPI), which is killed while that callback is in flight: the
// replica has handed the code to the login's workflow, and the authorization
// server holds the code exchange until the replica is dead. The browser then
// retries the callback on the replica at api, as a browser or a balancer
// retries a GET whose connection was reset. The login must complete once:
// one authorization, one code exchange, the token stored once; the retry is
// answered as a success without a second exchange. It returns the
// connection's id.
func connectAcmeKillingCallback(t *testing.T, d *deployment, db *pgxpool.Pool, as *oauthtest.Server, serverURL, org, victim, victimAPI, api string) string {
	t.Helper()
	exchanging, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	as.OnCodeExchange = func() {
		once.Do(func() { close(exchanging) })
		<-release
	}
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce)

	d.mustAt(api, 201, "POST", "/api/admin/mcp/servers", map[string]any{"slug": "acme", "name": "Acme", "transport": "http",
		"auth": "oauth", "url": serverURL, "config": map[string]any{"provider": "oauth2", "dynamic_registration": true}})
	// Connect is answered by the victim, so the provider sends the browser
	// back to it (the callback URL is the starting request's loopback host).
	conn := d.mustAt(victimAPI, 200, "POST", "/api/mcp/connect", map[string]any{"slug": "acme", "owner_scope": "organisation", "owner_id": org})
	connID := conn["connection"].(map[string]any)["id"].(string)
	authURL, _ := conn["authorization_url"].(string)
	if authURL == "" {
		t.Fatalf("connect: no authorization URL in %v", conn)
	}

	// The browser at the authorization server: it approves and redirects.
	noFollow := &http.Client{Jar: d.Browser.Jar, Timeout: time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || resp.StatusCode != http.StatusFound || !strings.HasPrefix(back.String(), victimAPI+"/") {
		t.Fatalf("authorize: %d, Location %q (want the callback on %s)", resp.StatusCode, back, victimAPI)
	}

	type answer struct {
		status int
		body   string
		err    error
	}
	first := make(chan answer, 1)
	go func() {
		resp, err := d.Browser.Get(back.String())
		if err != nil {
			first <- answer{err: err}
			return
		}
		first <- answer{status: resp.StatusCode, body: readAll(resp)}
	}()
	select {
	case <-exchanging:
	case a := <-first:
		t.Fatalf("the callback on %s was answered before its code was exchanged: %d %s %v\n%s", victim, a.status, a.body, a.err, d.Logs())
	case <-time.After(5 * time.Minute):
		t.Fatalf("the login's code was never exchanged\n%s", d.Logs())
	}
	d.kill(victim)
	if a := <-first; a.err == nil && a.status == http.StatusOK {
		t.Fatalf("the killed replica answered the callback: %d %s", a.status, a.body)
	}
	releaseOnce()

	// The browser retries the same callback on the surviving replica. The
	// login's single-use state went with the first delivery; the retry is
	// recognised by the login cookie the browser still holds and answers the
	// login's outcome, as the first delivery would have, without handing the
	// code over again.
	retry := *back
	retry.Host = strings.TrimPrefix(api, "http://")
	resp, err = d.Browser.Get(retry.String())
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(resp)
	var outcome struct {
		ConnectionID string `json:"connection_id"`
		Status       string `json:"status"`
	}
	if err := json.Unmarshal([]byte(body), &outcome); resp.StatusCode != http.StatusOK || err != nil ||
		outcome.ConnectionID != connID || outcome.Status != "connected" {
		t.Fatalf("the retried callback: %d %s (want 200, the login connected)\n%s", resp.StatusCode, body, d.Logs())
	}
	waitFor(t, "the login connected", func() bool {
		r := d.callAt(api, "GET", "/api/mcp/connections/"+connID, nil)
		return r.Map()["status"] == "connected"
	})
	for _, k := range []string{"register", "authorize", "code"} {
		if n := as.Count(k); n != 1 {
			t.Errorf("the authorization server saw %d %s requests, want 1", n, k)
		}
	}
	var versions, rows int
	if err := db.QueryRow(context.Background(), `SELECT coalesce(max(version), 0), count(*) FROM connection_credentials WHERE connection_id = $1`,
		connID).Scan(&versions, &rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 || versions != 1 {
		t.Errorf("the login's token: %d rows, version %d; want stored once (1 row, version 1)", rows, versions)
	}
	return connID
}
