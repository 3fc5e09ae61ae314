package host_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/secret"
)

// adapterRow inserts an adapter's catalog row (config names the adapter)
// and a login of it with that status.
func adapterRow(t testing.TB, db *pgxpool.Pool, slug, url, auth, config string, status connstore.Status) string {
	t.Helper()
	var sid, org string
	if err := db.QueryRow(context.Background(), `WITH s AS (
INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config) VALUES ($1, $1, 'adapter', 'http', $2, $3, $4) RETURNING id),
o AS (INSERT INTO organisations (name, slug) VALUES ($1, $1) RETURNING id)
SELECT s.id::text, o.id::text FROM s, o`, slug, url, auth, config).Scan(&sid, &org); err != nil {
		t.Fatal(err)
	}
	return connectionstest.InsertAs(t, db, sid, "organisation", org, status)
}

func scalar(t testing.TB, db *pgxpool.Pool, sql string, args ...any) string {
	t.Helper()
	var s string
	if err := db.QueryRow(context.Background(), sql, args...).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func newEngine(t testing.TB, db *pgxpool.Pool, slug string) *connectors.Engine {
	t.Helper()
	entry, err := secret.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := connectors.New(context.Background(), connectors.Options{DB: db, Keyring: keys,
		Connectors: []connectors.Ref{{Provider: connectors.ProviderID(slug)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	return eng
}

// connectKey checks and stores a key through the connect service, as the
// API's key connect does, and answers the tools the check listed.
func connectKey(ctx context.Context, db *pgxpool.Pool, eng *connectors.Engine, h *host.Host, id, key string) (connections.Result, error) {
	svc := &connections.Service{DB: db, Engine: eng, Adapters: h}
	return svc.ConnectKey(ctx, id, map[string]string{connectors.MetaTokenField: key}, "")
}

// creds is an in-memory credential source: Refresh moves to the next token.
type creds struct {
	mu        sync.Mutex
	tokens    map[uuid.UUID][]string
	refreshes int
	rejected  map[uuid.UUID]string
}

func (c *creds) Token(_ context.Context, id uuid.UUID) (connectors.Credential, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if code, ok := c.rejected[id]; ok {
		return connectors.Credential{}, &connectors.ErrReconnectRequired{ConnectionID: id, Code: code}
	}
	if ts := c.tokens[id]; len(ts) > 0 {
		return connectors.Credential{AccessToken: ts[0]}, nil
	}
	return connectors.Credential{}, connectors.ErrNoCredential
}

func (c *creds) Refresh(_ context.Context, id uuid.UUID) (connectors.Credential, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.refreshes++
	if ts := c.tokens[id]; len(ts) > 1 {
		c.tokens[id] = ts[1:]
	}
	return connectors.Credential{AccessToken: c.tokens[id][0]}, nil
}

func (c *creds) MarkRejected(_ context.Context, id uuid.UUID, code string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rejected == nil {
		c.rejected = map[uuid.UUID]string{}
	}
	c.rejected[id] = code
	return nil
}

func (c *creds) rejectedCode(id string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rejected[uuid.MustParse(id)]
}
