// Package adapterstest sets up what an adapter's end-to-end test goes
// through in production: the adapter's catalog row from the manifests
// (pointed at a fake service), a pending login to it, the connector engine
// on a fresh PostgreSQL database, the adapter host and the connect service.
// Run is the conformance suite every adapter passes through them.
package adapterstest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/adapters/host"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// Env is one adapter's login, ready to Connect.
type Env struct {
	DB           *pgxpool.Pool
	ConnectionID string
	Tools        int // the manifest's tool count for the row
	Engine       *connectors.Engine
	Host         *host.Host
	// Service is the connect service over Host, as the API builds it.
	Service *connections.Service
	t       testing.TB
}

// New builds the environment for the manifest entry slug, its URL replaced by url.
func New(t testing.TB, slug, url string) *Env {
	t.Helper()
	return NewWithHost(t, slug, url, host.Options{})
}

// NewWithHost is New with the host's options (its timeout, say); their DB
// and Credentials are the environment's.
func NewWithHost(t testing.TB, slug, url string, o host.Options) *Env {
	t.Helper()
	db := testdb.New(t)
	e := &Env{DB: db, t: t}
	e.ConnectionID, e.Tools = catalogRow(t, db, slug, url)
	entry, err := secret.GenerateKey("k1")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	e.Engine, err = connectors.New(context.Background(), connectors.Options{DB: db, Keyring: keys,
		Connectors: []connectors.Ref{{Provider: connectors.ProviderID(slug)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Engine.Close)
	o.DB, o.Credentials = db, e.Engine.Resolver()
	e.Host = host.New(o)
	e.Service = &connections.Service{DB: db, Engine: e.Engine, Adapters: e.Host, Log: o.Log}
	return e
}

// Connect checks a key with the service and stores it, as the API's key
// connect does, and answers the tools it listed by model-facing name.
func (e *Env) Connect(ctx context.Context, key string) ([]string, error) {
	return e.ConnectValues(ctx, map[string]string{connectors.MetaTokenField: key})
}

// ConnectValues is Connect with a multi-field key (catalog key_fields).
func (e *Env) ConnectValues(ctx context.Context, values map[string]string) ([]string, error) {
	r, err := e.Service.ConnectKey(ctx, e.ConnectionID, values, "")
	if err != nil {
		return nil, err
	}
	c := connectionstest.Get(e.t, e.DB, e.ConnectionID)
	names := make([]string, len(r.Listed))
	for i, l := range r.Listed {
		names[i] = grants.ModelName(c.Server.Slug, l.Name)
	}
	return names, nil
}

// catalogRow inserts the manifest's row for slug (kind adapter) with its
// curated tools, and a pending organisation login to it.
func catalogRow(t testing.TB, db *pgxpool.Pool, slug, url string) (connectionID string, tools int) {
	t.Helper()
	ms, err := grants.Manifests()
	if err != nil {
		t.Fatal(err)
	}
	var entry *grants.ServerInput
	for i := range ms {
		if *ms[i].Slug == slug {
			entry = &ms[i]
		}
	}
	if entry == nil {
		t.Fatalf("adapterstest: no %s entry in the manifests", slug)
	}
	ctx := context.Background()
	var serverID, orgID string
	if err := db.QueryRow(ctx, `WITH s AS (
INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config) VALUES ($1, $2, 'adapter', 'http', $3, 'token', $4) RETURNING id),
o AS (INSERT INTO organisations (name, slug) VALUES ('acme', 'acme') RETURNING id)
SELECT s.id::text, o.id::text FROM s, o`,
		slug, *entry.Name, url, string(entry.Config)).Scan(&serverID, &orgID); err != nil {
		t.Fatal(err)
	}
	connectionID = connectionstest.Insert(t, db, serverID, "organisation", orgID)
	if entry.Tools == nil {
		return connectionID, 0
	}
	for i, tool := range *entry.Tools {
		if _, err := db.Exec(ctx, `INSERT INTO mcp_catalog_tools (server_id, name, description, input_schema, position)
			SELECT id, $2, $3, $4, $5 FROM mcp_servers WHERE slug = $1`,
			slug, tool.Name, tool.Description, string(tool.InputSchema), i); err != nil {
			t.Fatal(err)
		}
	}
	return connectionID, len(*entry.Tools)
}

// Stored reports whether the engine holds a login for the connection (a
// refused key stores none).
func (e *Env) Stored(t testing.TB) bool {
	t.Helper()
	_, err := e.Engine.Resolver().Token(context.Background(), uuid.MustParse(e.ConnectionID))
	return !errors.Is(err, connectors.ErrNoCredential)
}

// Hint is the login's "status account_hint", as the engine reads it.
func (e *Env) Hint(t testing.TB) string {
	t.Helper()
	c, err := e.Engine.Get(context.Background(), uuid.MustParse(e.ConnectionID))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(c.Status) + " " + c.AccountHint)
}
