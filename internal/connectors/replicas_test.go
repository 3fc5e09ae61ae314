package connectors_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/connectors"
)

// twoReplicas connects a login through eng1; eng2 only rechecks its cache
// hourly, so it learns of a change by the invalidation message alone.
func twoReplicas(t *testing.T) (e *env, id uuid.UUID, eng1, eng2 *connectors.Engine) {
	e = newEnv(t)
	e.addServer(t, "acme")
	id = e.addConnection(t, "acme")
	eng1 = e.engine(t, engineOpts{})
	eng2 = e.engine(t, engineOpts{timing: connectors.Timing{Recheck: time.Hour}})
	e.connect(t, eng1, id)
	return e, id, eng1, eng2
}

// TestOtherReplicasDropTheirCopy: a replica that cached a credential stops
// serving it soon after another replica disconnects the login, and picks up
// the new login after a reconnect. Its periodic recheck is pushed far out,
// so only the invalidation message can make this pass.
func TestOtherReplicasDropTheirCopy(t *testing.T) {
	e, id, eng1, eng2 := twoReplicas(t)
	ctx := context.Background()
	c1, err := eng2.Resolver().Token(ctx, id)
	if err != nil {
		t.Fatal(err)
	}

	if err := eng1.Disconnect(ctx, id); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the other replica to drop the disconnected login", func() bool {
		_, err := eng2.Resolver().Token(ctx, id)
		return errors.Is(err, &connectors.ErrReconnectRequired{})
	})

	e.connect(t, eng1, id)
	waitFor(t, "the other replica to serve the new login", func() bool {
		c, err := eng2.Resolver().Token(ctx, id)
		return err == nil && c.AccessToken != c1.AccessToken
	})
	c2, _ := eng2.Resolver().Token(ctx, id)
	c3, _ := eng1.Resolver().Token(ctx, id)
	if c2.AccessToken != c3.AccessToken {
		t.Fatal("replicas serve different tokens after the reconnect")
	}
}

// TestCatalogHeaderInjection: a token server without a plugin gets its key in
// the header its catalog row names, with or without a scheme, through every
// injection surface; call sites need not know the header.
func TestCatalogHeaderInjection(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, row := range []struct{ slug, cfg string }{
		{"opensea", `{"header": "X-API-KEY"}`},
		{"etherscan", `{"header": "Authorization", "scheme": "Bearer"}`},
		{"dexpaprika", `{"header": "Authorization"}`},
		{"plain", `{}`},
	} {
		if _, err := e.pool.Exec(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config) VALUES ($1, $1, 'http', 'https://mcp.example/mcp', 'token', $2)`, row.slug, row.cfg); err != nil {
			t.Fatal(err)
		}
	}
	eng := e.engine(t, engineOpts{})
	cases := []struct {
		slug, header, value string
		noAuthorization     bool
	}{
		{"opensea", "X-API-KEY", "key-opensea", true},
		{"etherscan", "Authorization", "Bearer key-etherscan", false},
		{"dexpaprika", "Authorization", "key-dexpaprika", false},
		{"plain", "Authorization", "Bearer key-plain", false},
	}
	for _, tc := range cases {
		t.Run(tc.slug, func(t *testing.T) {
			id := e.addConnection(t, tc.slug)
			if _, err := eng.ConnectKey(ctx, id, map[string]string{"token": "key-" + tc.slug}); err != nil {
				t.Fatal(err)
			}
			inj, err := eng.Resolver().Injection(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if inj.Headers[tc.header] != tc.value || len(inj.Headers) != 1 {
				t.Fatalf("headers = %v", inj.Headers)
			}
			if inj.Meta[connectors.MetaTokenField] != "key-"+tc.slug {
				t.Fatal("no _meta token")
			}
			var got http.Header
			api := httptestServer(t, func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone() })
			resp, err := (&http.Client{Transport: eng.Resolver().Transport(nil, id)}).Get(api)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if got.Get(tc.header) != tc.value || tc.noAuthorization && got.Get("Authorization") != "" {
				t.Fatalf("transport sent %v", got)
			}
		})
	}
}
