package connect

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	acts "github.com/guilds/guilds/activities/connect"
)

// Two organisations connect the same server through two spellings of the
// platform's host (two redirect URIs, so two dynamically registered
// confidential clients): the second registration must not orphan the first
// login, and both keep refreshing.
func TestTwoRedirectURIsBothLoginsRefresh(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := newDevEnv(t)
	e.as.AuthMethod = "client_secret_post"
	redirects := []string{"http://127.0.0.1:9/api/mcp/oauth/callback", "http://localhost:9/api/mcp/oauth/callback"}
	var ids []string
	for i, redirect := range redirects {
		org := e.org
		if i > 0 {
			if err := e.db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Other', 'other') RETURNING id`).Scan(&org); err != nil {
				t.Fatal(err)
			}
		}
		cid, err := e.eng.EnsureConnection(ctx, "notion", "organisation", &org)
		if err != nil {
			t.Fatal(err)
		}
		id := cid.String()
		authURL, err := Start(ctx, e.c, e.queue, Input{ConnectionID: id, RedirectURI: redirect}, e.eng)
		if err != nil {
			t.Fatal(err)
		}
		q := browse(t, authURL)
		sealed, err := acts.Seal(e.kr, id, acts.CallbackParams{State: q.Get("state"), Code: q.Get("code")})
		if err != nil {
			t.Fatal(err)
		}
		if err := Deliver(ctx, e.c, id, Callback{Sealed: sealed}); err != nil {
			t.Fatal(err)
		}
		if res, err := Wait(ctx, e.c, id); err != nil || res.Status != StatusConnected {
			t.Fatalf("login through %s: %+v %v", redirect, res, err)
		}
		ids = append(ids, id)
	}
	if n := e.as.Count("register"); n != 2 {
		t.Fatalf("registrations = %d, want one per redirect URI", n)
	}
	// The registered clients' secrets are stored sealed only.
	var stored string
	if err := e.db.QueryRow(ctx, `SELECT config::text FROM mcp_servers WHERE slug = 'notion'`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(stored, `"secret-`) || strings.Count(stored, "client_secret_sealed") != 3 {
		t.Fatalf("catalog row config: %s", stored)
	}
	for round := 0; round < 2; round++ {
		for i, id := range ids {
			if _, err := e.eng.Resolver().Refresh(ctx, uuid.MustParse(id)); err != nil {
				t.Fatalf("round %d: refresh of the login through %s: %v", round, redirects[i], err)
			}
		}
	}
	// A third login through the first spelling reuses its client.
	if _, err := Start(ctx, e.c, e.queue, Input{ConnectionID: ids[0], RedirectURI: redirects[0]}, e.eng); err != nil {
		t.Fatal(err)
	}
	if n := e.as.Count("register"); n != 2 {
		t.Fatalf("registrations after a reconnect = %d, want 2", n)
	}
}
