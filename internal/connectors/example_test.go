package connectors_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/migrate"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// A token connection: connect it once, then resolve its credential per call
// and send it with an HTTP client.
func ExampleResolver_Token() {
	ctx := context.Background()
	pool, done := exampleDatabase(ctx)
	defer done()
	if _, err := pool.Exec(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth) VALUES ('etherscan', 'Etherscan', 'http', 'https://mcp.etherscan.io/mcp', 'token')`); err != nil {
		panic(err)
	}

	keyEntry, _ := secret.GenerateKey("k1")
	keys, _ := secret.ParseKeyring(keyEntry)
	eng, err := connectors.New(ctx, connectors.Options{DB: pool, Keyring: keys,
		Connectors: []connectors.Ref{{Provider: "etherscan"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer eng.Close()
	id, _ := eng.EnsureConnection(ctx, "etherscan", "platform", nil)
	if _, err := eng.ConnectKey(ctx, id, map[string]string{"token": "demo-key"}); err != nil {
		fmt.Println(err)
		return
	}

	// Per call: served from memory while fresh, refreshed once when stale.
	cred, err := eng.Resolver().Token(ctx, id)
	fmt.Println(cred, err) // values never print

	// Or let a transport inject it (the header comes from the provider).
	remote := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Println("remote saw Authorization:", r.Header.Get("Authorization"))
	}))
	defer remote.Close()
	client := &http.Client{Transport: eng.Resolver().Transport(nil, id)}
	resp, err := client.Get(remote.URL)
	if err == nil {
		resp.Body.Close()
	}
	// Output:
	// connectors.Credential{access:set refresh:none expiry:0001-01-01T00:00:00Z extra:0 fields} <nil>
	// remote saw Authorization: Bearer demo-key
}

// exampleDatabase creates and migrates a throwaway database (examples have
// no testing.TB for testdb).
func exampleDatabase(ctx context.Context) (*pgxpool.Pool, func()) {
	admin, err := pgx.Connect(ctx, testdb.ServerURL())
	if err != nil {
		panic(err)
	}
	name := fmt.Sprintf("guilds_example_%d", os.Getpid())
	if _, err := admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
		panic(err)
	}
	if _, err := admin.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		panic(err)
	}
	cfg, _ := pgxpool.ParseConfig(testdb.ServerURL())
	cfg.ConnConfig.Database = name
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		panic(err)
	}
	if _, err := migrate.Up(ctx, pool); err != nil {
		panic(err)
	}
	return pool, func() {
		pool.Close()
		// Best effort: a leftover example database is dropped by the next run.
		_, _ = admin.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
		_ = admin.Close(ctx)
	}
}
