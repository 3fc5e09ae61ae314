package connectors

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// IssuerMoved marks the logins the former authorization server issued, and
// those that recorded no issuer (they were issued under the row's former
// one too), and leaves the new server's logins alone.
func TestIssuerMovedMarksTheFormerServersLogins(t *testing.T) {
	ctx := context.Background()
	pool := testdb.New(t)
	k, _ := secret.GenerateKey("k1")
	kr, _ := secret.ParseKeyring(k)
	e, err := New(ctx, Options{DB: pool, Keyring: kr, Providers: []ProviderID{}, Connectors: []Ref{{Provider: "x"}}, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Close)
	var serverID string
	if err := pool.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, transport, auth, config) VALUES ('x', 'x', 'http', 'oauth',
'{"oauth":{"issuer":"https://as2.example","token_url":"https://as2.example/token"}}') RETURNING id::text`).Scan(&serverID); err != nil {
		t.Fatal(err)
	}
	logins := map[string]*OAuthClient{
		"former": {ClientID: "c1", TokenURL: "https://as1.example/token", Issuer: "https://as1.example"},
		"legacy": nil,
		"new":    {ClientID: "c2", TokenURL: "https://as2.example/token", Issuer: "https://as2.example"},
	}
	ids := map[string]uuid.UUID{}
	for name, c := range logins {
		id := uuid.MustParse(connectionstest.Insert(t, pool, serverID, "organisation", uuid.NewString()))
		if _, err := putCredential(ctx, pool, kr, id, Credential{AccessToken: "at-" + name, RefreshToken: "rt-" + name, Client: c}, ""); err != nil {
			t.Fatal(err)
		}
		ids[name] = id
	}
	n, err := e.IssuerMoved(ctx, uuid.MustParse(serverID))
	if err != nil || n != 2 {
		t.Fatalf("marked %d: %v", n, err)
	}
	for name, id := range ids {
		_, err := e.Resolver().Token(ctx, id)
		var rr *ErrReconnectRequired
		switch name {
		case "new":
			if err != nil {
				t.Errorf("the new server's login: %v", err)
			}
		default:
			if !errors.As(err, &rr) || rr.Code != CodeIssuerChanged {
				t.Errorf("%s login: %v", name, err)
			}
		}
	}
	if n, err := e.IssuerMoved(ctx, uuid.MustParse(serverID)); err != nil || n != 0 {
		t.Fatalf("a second call marked %d: %v", n, err)
	}
}
