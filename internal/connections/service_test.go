package connections_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testdb"
)

// newService is the connect service over a fresh database holding one
// published token server (a peer taking tok-good-0123) and one organisation.
func newService(t *testing.T) (svc *connections.Service, db *pgxpool.Pool, orgID string) {
	t.Helper()
	ctx := context.Background()
	var down atomic.Bool
	url := peer(t, "tok-good-0123", &down)
	db = testdb.New(t)
	if err := db.QueryRow(ctx, `WITH s AS (
INSERT INTO mcp_servers (slug, name, transport, url, auth, config) VALUES ('peer', 'peer', 'http', $1, 'token', '{"header":"Authorization","scheme":"Bearer"}')),
o AS (INSERT INTO organisations (name, slug) VALUES ('acme', 'acme') RETURNING id)
SELECT id::text FROM o`, url).Scan(&orgID); err != nil {
		t.Fatal(err)
	}
	entry, _ := secret.GenerateKey("k1")
	keys, _ := secret.ParseKeyring(entry)
	eng, err := connectors.New(ctx, connectors.Options{DB: db, Keyring: keys, Connectors: []connectors.Ref{{Provider: "peer"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	svc = &connections.Service{DB: db, Engine: eng, Integrations: integrations.New(func(string) string { return "" }),
		Checker: mcppool.Checker{DB: db, Engine: eng}, Adapters: host.New(host.Options{DB: db, Credentials: eng.Resolver()})}
	return svc, db, orgID
}

// The key strategy: a refused key leaves no login behind; an accepted one is
// connected with the tools it listed; a second connect at the same scope is
// a conflict; Disconnect keeps the login, disconnected.
func TestServiceConnectKey(t *testing.T) {
	ctx := context.Background()
	svc, db, orgID := newService(t)
	pool := mcppool.New(mcppool.Options{DB: db, Credentials: svc.Engine.Resolver()})
	t.Cleanup(pool.Close)
	svc.Sessions = pool
	admin := access.Principal{UserID: "u", Admin: true}
	req := connections.Request{Login: connections.ConnectInput{Slug: "peer", OwnerScope: grants.ScopeOrganisation, OwnerID: orgID}}

	req.Key = "tok-bad-45678"
	_, err := svc.Connect(ctx, admin, req)
	var se *connections.ServerError
	if !errors.As(err, &se) || se.Server != "peer" || !errors.Is(err, mcppool.ErrKeyRejected) {
		t.Fatalf("Connect with a refused key = %v", err)
	}
	if left, _ := connstore.List(ctx, db, "", ""); len(left) != 0 {
		t.Fatalf("a refused first connect left %d logins", len(left))
	}

	req.Key = "tok-good-0123"
	out, err := svc.Connect(ctx, admin, req)
	if err != nil || out.Tools != 2 || out.Connection.Status != connstore.StatusConnected || out.AuthorizationURL != "" {
		t.Fatalf("Connect = %+v, %v", out, err)
	}
	if _, err := svc.Connect(ctx, admin, req); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second connect = %v, want a conflict", err)
	}
	if line, err := svc.Probe(ctx, out.Connection.ID); err != nil || line == "" {
		t.Fatalf("Probe = %q, %v", line, err)
	}
	if err := svc.Disconnect(ctx, out.Connection.ID, "user:v"); err != nil {
		t.Fatal(err)
	}
	id, _ := connstore.ParseID(out.Connection.ID)
	if c, err := connstore.Get(ctx, db, id); err != nil || c.Status != connstore.StatusDisconnected {
		t.Fatalf("after Disconnect: %s, %v", c.Status, err)
	}
	// The trail holds the connect and the disconnect, each with who did it,
	// under the login's organisation; the refused key left nothing.
	got, err := audit.List(ctx, db, audit.Filter{Orgs: []string{orgID}, ConnectionID: out.Connection.ID})
	if err != nil || len(got) != 2 {
		t.Fatalf("login events: %+v %v", got, err)
	}
	if d, c := got[0], got[1]; d.Action != audit.ActionDisconnect || d.Actor != "user:v" || c.Action != audit.ActionConnect ||
		c.Actor != "user:u" || c.Tool != "peer" || c.LoginScope != "organisation" || c.Outcome != "connected" {
		t.Fatalf("login events: %+v", got)
	}
}

// A KeyStep's failed After wipes the stored key and the new login is removed.
func TestServiceKeyStepFailureRemovesLogin(t *testing.T) {
	ctx := context.Background()
	svc, db, orgID := newService(t)
	boom := errors.New("after failed")
	_, err := svc.Connect(ctx, access.Principal{Admin: true}, connections.Request{
		Login: connections.ConnectInput{Slug: "peer", OwnerScope: grants.ScopeOrganisation, OwnerID: orgID},
		KeyStep: func(context.Context, grants.ServerRoute) (*connections.KeyStep, error) {
			return &connections.KeyStep{Key: "tok-good-0123", After: func(context.Context, connections.Connection) error { return boom }}, nil
		},
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Connect = %v", err)
	}
	if left, _ := connstore.List(ctx, db, "", ""); len(left) != 0 {
		t.Fatalf("a failed step left %d logins", len(left))
	}
}
