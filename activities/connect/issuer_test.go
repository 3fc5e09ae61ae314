package connect_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/google/uuid"

	acts "github.com/guilds/guilds/activities/connect"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	_ "github.com/guilds/guilds/internal/connectors/providers/oauthgeneric"
	"github.com/guilds/guilds/internal/mcpoauth"
	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// login runs one connect of a connection the way the workflow does: the
// Prepare activity (discovery, client, pending login), the browser's visit
// to the authorization URL (the local server approves at once), and the
// code exchange of the callback.
func login(t *testing.T, a *acts.Activities, id, redirect string) *url.URL {
	t.Helper()
	ctx := context.Background()
	raw, err := a.Prepare(ctx, acts.PrepareInput{ConnectionID: id, RedirectURI: redirect})
	if err != nil {
		t.Fatal(err)
	}
	authURL, _ := url.Parse(raw)
	state, code := approve(t, raw)
	if _, err := a.Engine.CompleteOAuth(ctx, state, code); err != nil {
		t.Fatal(err)
	}
	return authURL
}

// approve visits an authorization URL as the consenting browser and
// returns the state and code of the redirect back.
func approve(t *testing.T, raw string) (state, code string) {
	t.Helper()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noFollow.Get(raw)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	back, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || back.Query().Get("code") == "" {
		t.Fatalf("authorization answered HTTP %d, Location %q", resp.StatusCode, resp.Header.Get("Location"))
	}
	return back.Query().Get("state"), back.Query().Get("code")
}

// The authorization-server migration: a login made through AS1; the MCP
// server then moves (its protected-resource metadata names AS2). The next
// connect registers a client at AS2 (AS1's client id never reaches AS2), the
// login AS1 issued is marked reconnect_required (issuer_changed) for the
// operator, and neither a call nor a forced refresh sends its tokens
// anywhere: AS2 sees no refresh token of AS1's and AS1 no refresh either.
// The new login at AS2 then refreshes at AS2.
func TestAuthorizationServerMigration(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	k, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(k)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := connectors.New(ctx, connectors.Options{DB: db, Keyring: kr, Providers: []connectors.ProviderID{"oauth2"},
		Logger: slog.New(slog.DiscardHandler), HTTPClient: mcpoauth.Policy{AllowLoopback: true}.Client(0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	as1, as2 := oauthtest.New(t), oauthtest.New(t)
	rs := as1.Protect(t, "/mcp", http.NotFoundHandler(), nil)
	var sid string
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
VALUES ('moving', 'Moving', 'remote', 'http', $1, 'oauth', '{"provider":"oauth2","dynamic_registration":true}') RETURNING id`,
		rs.URL+"/mcp").Scan(&sid); err != nil {
		t.Fatal(err)
	}
	id := connectionstest.Insert(t, db, sid, "organisation", uuid.NewString())
	cid := uuid.MustParse(id)
	a := &acts.Activities{DB: db, Engine: eng, Keyring: kr, Discoverer: &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}}
	const redirect = "http://127.0.0.1:8080/api/mcp/oauth/callback"

	first := login(t, a, id, redirect)
	if first.Host != hostOf(as1.URL) || as1.Count("register") != 1 {
		t.Fatalf("first login at %s, registrations %d", first.Host, as1.Count("register"))
	}
	if _, err := eng.Resolver().Refresh(ctx, cid); err != nil || as1.Count("refresh") != 1 {
		t.Fatalf("refresh at AS1: %v (%d)", err, as1.Count("refresh"))
	}
	as1Tokens := as1.Issued()

	as1.MoveResourcesTo(as2)
	raw, err := a.Prepare(ctx, acts.PrepareInput{ConnectionID: id, RedirectURI: redirect})
	if err != nil {
		t.Fatal(err)
	}
	second, _ := url.Parse(raw)
	if second.Host != hostOf(as2.URL) || as2.Count("register") != 1 || as1.Count("register") != 1 ||
		second.Query().Get("client_id") == first.Query().Get("client_id") {
		t.Fatalf("the next connect must register at AS2: %s (AS1 %d, AS2 %d registrations)", raw, as1.Count("register"), as2.Count("register"))
	}
	// The operator sees the verdict at once, and the stored login is never used.
	c, err := eng.Get(ctx, cid)
	if err != nil {
		t.Fatal(err)
	}
	if c.Health.State != connectors.HealthReconnectRequired || c.Health.LastErrorCode != connectors.CodeIssuerChanged {
		t.Fatalf("health after the move: %+v", c.Health)
	}
	var rr *connectors.ErrReconnectRequired
	if _, err := eng.Resolver().Token(ctx, cid); !errors.As(err, &rr) || rr.Code != connectors.CodeIssuerChanged {
		t.Fatalf("a call after the move: %v", err)
	}
	if _, err := eng.Resolver().Refresh(ctx, cid); !errors.As(err, &rr) || rr.Code != connectors.CodeIssuerChanged {
		t.Fatalf("a forced refresh after the move: %v", err)
	}
	if as2.Count("refresh") != 0 || as1.Count("refresh") != 1 {
		t.Fatalf("refreshes after the move: AS1 %d, AS2 %d", as1.Count("refresh"), as2.Count("refresh"))
	}
	for _, rt := range as2.RefreshTokensSeen() {
		if slices.Contains(as1Tokens, rt) {
			t.Fatal("AS1's refresh token was sent to AS2")
		}
	}

	// The new login, at AS2, is served and refreshes there.
	login(t, a, id, redirect)
	if _, err := eng.Resolver().Token(ctx, cid); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Resolver().Refresh(ctx, cid); err != nil || as2.Count("refresh") != 1 || as1.Count("refresh") != 1 {
		t.Fatalf("refresh of the new login: %v (AS1 %d, AS2 %d)", err, as1.Count("refresh"), as2.Count("refresh"))
	}
}

// A login of the former server that the row's move was not announced for
// (another replica, a row edited by hand): the resolver refuses it by
// itself, on a call and on a refresh, with the same verdict.
func TestResolverRefusesALoginOfAnotherIssuer(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	k, _ := secret.GenerateKey("k1")
	kr, _ := secret.ParseKeyring(k)
	eng, err := connectors.New(ctx, connectors.Options{DB: db, Keyring: kr, Providers: []connectors.ProviderID{"oauth2"},
		Logger: slog.New(slog.DiscardHandler), HTTPClient: mcpoauth.Policy{AllowLoopback: true}.Client(0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	as1, as2 := oauthtest.New(t), oauthtest.New(t)
	rs := as1.Protect(t, "/mcp", http.NotFoundHandler(), nil)
	var sid string
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
VALUES ('moving', 'Moving', 'remote', 'http', $1, 'oauth', '{"provider":"oauth2","dynamic_registration":true}') RETURNING id`,
		rs.URL+"/mcp").Scan(&sid); err != nil {
		t.Fatal(err)
	}
	id := connectionstest.Insert(t, db, sid, "organisation", uuid.NewString())
	cid := uuid.MustParse(id)
	a := &acts.Activities{DB: db, Engine: eng, Keyring: kr, Discoverer: &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}}
	login(t, a, id, "http://127.0.0.1:1/cb")
	if _, err := eng.Resolver().Token(ctx, cid); err != nil {
		t.Fatal(err)
	}
	// The row is pointed at AS2 without Connect (no IssuerMoved call).
	if _, err := db.Exec(ctx, `UPDATE mcp_servers SET config = jsonb_set(jsonb_set(config, '{oauth,issuer}', to_jsonb($2::text)),
'{oauth,token_url}', to_jsonb($3::text)) WHERE id = $1`, sid, as2.URL, as2.URL+"/token"); err != nil {
		t.Fatal(err)
	}
	var rr *connectors.ErrReconnectRequired
	if _, err := eng.Resolver().Refresh(ctx, cid); !errors.As(err, &rr) || rr.Code != connectors.CodeIssuerChanged {
		t.Fatalf("refresh: %v", err)
	}
	if _, err := eng.Resolver().Token(ctx, cid); !errors.As(err, &rr) || rr.Code != connectors.CodeIssuerChanged {
		t.Fatalf("call: %v", err)
	}
	if as1.Count("refresh")+as2.Count("refresh") != 0 {
		t.Fatalf("refreshes: AS1 %d, AS2 %d", as1.Count("refresh"), as2.Count("refresh"))
	}
}

// A login pending at AS1 when another connect finds the server moved to
// AS2: its callback is refused before the code is exchanged, so neither
// AS2's token endpoint nor anyone else sees AS1's code and verifier.
func TestPendingLoginOfTheFormerServerIsNotExchanged(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	k, _ := secret.GenerateKey("k1")
	kr, _ := secret.ParseKeyring(k)
	eng, err := connectors.New(ctx, connectors.Options{DB: db, Keyring: kr, Providers: []connectors.ProviderID{"oauth2"},
		Logger: slog.New(slog.DiscardHandler), HTTPClient: mcpoauth.Policy{AllowLoopback: true}.Client(0)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	as1, as2 := oauthtest.New(t), oauthtest.New(t)
	rs := as1.Protect(t, "/mcp", http.NotFoundHandler(), nil)
	var sid string
	if err := db.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
VALUES ('moving', 'Moving', 'remote', 'http', $1, 'oauth', '{"provider":"oauth2","dynamic_registration":true}') RETURNING id`,
		rs.URL+"/mcp").Scan(&sid); err != nil {
		t.Fatal(err)
	}
	a := &acts.Activities{DB: db, Engine: eng, Keyring: kr, Discoverer: &mcpoauth.Discoverer{Policy: mcpoauth.Policy{AllowLoopback: true}}}
	const redirect = "http://127.0.0.1:1/cb"
	pendingID := connectionstest.Insert(t, db, sid, "organisation", uuid.NewString())
	raw, err := a.Prepare(ctx, acts.PrepareInput{ConnectionID: pendingID, RedirectURI: redirect})
	if err != nil {
		t.Fatal(err)
	}
	state, code := approve(t, raw)

	as1.MoveResourcesTo(as2)
	other := connectionstest.Insert(t, db, sid, "organisation", uuid.NewString())
	if _, err := a.Prepare(ctx, acts.PrepareInput{ConnectionID: other, RedirectURI: redirect}); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.CompleteOAuth(ctx, state, code); err == nil {
		t.Fatal("a login started at AS1 was completed after the server moved to AS2")
	}
	if as1.Count("code")+as2.Count("code") != 0 {
		t.Fatalf("code exchanges: AS1 %d, AS2 %d", as1.Count("code"), as2.Count("code"))
	}
}

func hostOf(raw string) string {
	u, _ := url.Parse(raw)
	return u.Host
}
