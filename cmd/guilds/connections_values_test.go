package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

const (
	cliQontoLogin  = "acme-sas-7310"
	cliQontoSecret = "5d2e8a41c9b07f36e1aa"
)

// cliQonto answers Qonto's organisation read for one login:secret_key pair.
func cliQonto(t *testing.T) string {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v2/organization" || r.Header.Get("Authorization") != cliQontoLogin+":"+cliQontoSecret {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"errors":[{"code":"unauthorized","detail":"bad login"}]}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"organization":{"slug":"acme-sas-7310","legal_name":"Acme SAS","bank_accounts":[]}}`)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// cliDB points the terminal at a fresh database and returns a connection to it.
func cliDB(t *testing.T) *pgx.Conn {
	t.Helper()
	dbURL := testdb.URL(t)
	k1, _ := secret.GenerateKey("k1")
	t.Setenv("DATABASE_URL", dbURL)
	t.Setenv("REDIS_URL", "redis://127.0.0.1:6379/5")
	t.Setenv("GUILDS_ENCRYPTION_KEY", k1)
	t.Setenv("GUILDS_AUTH_MODE", "token")
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(ctx) })
	return conn
}

// A row with several key fields (Qonto's login and secret key) connects from
// the terminal with its values as one JSON object on stdin, each named; a
// field missing or unknown is named, and nothing is stored until the service
// accepts the pair. No value reaches the output.
func TestConnectionsConnectValuesFromStdin(t *testing.T) {
	conn := cliDB(t)
	t.Setenv("GUILDS_OAUTH_ALLOW_PRIVATE", "1") // the fake service listens on loopback
	ctx := context.Background()
	if err := grants.SeedCatalog(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE mcp_servers SET url = $1 WHERE slug = 'qonto'`, cliQonto(t)); err != nil {
		t.Fatal(err)
	}
	org := cliOrg(t, conn)
	state := func() string {
		var creds int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM connection_credentials`).Scan(&creds); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d %d", connectionstest.Count(t, conn), creds)
	}
	connect := func(stdin string) (int, string, string) {
		return runConn(t, connectionsCommand, stdin, "connect", "qonto", "-scope", "organisation", "-owner", org, "-values")
	}
	for _, c := range []struct{ stdin, want string }{
		{``, "a JSON object of the fields"},
		{`{"login":"` + cliQontoLogin + `"`, "a JSON object of the fields"},
		{`{"login":"` + cliQontoLogin + `"}`, "values.secret_key"},
		{`{"login":"` + cliQontoLogin + `","secret_key":"` + cliQontoSecret + `","iban":"FR76000000000"}`, "values.iban"},
		{`{"login":"` + cliQontoLogin + `","secret_key":42}`, "a JSON object of the fields"},
		{`{"login":"` + cliQontoLogin + `","secret_key":"not-the-secret-key"}`, "qonto"},
	} {
		code, out, errs := connect(c.stdin)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Contains(out+errs, cliQontoSecret) || strings.Contains(out+errs, "not-the-secret") || state() != "0 0" {
			t.Fatalf("connect with %q: %d %q %q (logins, credentials: %s)", c.stdin, code, out, errs, state())
		}
	}
	code, out, errs := connect(`{"login": "` + cliQontoLogin + `", "secret_key": "` + cliQontoSecret + `"}` + "\n")
	if code != 0 || !strings.Contains(out, "connected qonto") || !strings.Contains(errs, "tools listed") ||
		strings.Contains(out+errs, cliQontoSecret) || state() != "1 1" {
		t.Fatalf("values connect: %d %q %q (logins, credentials: %s)", code, out, errs, state())
	}
	code, _, errs = runConn(t, connectionsCommand, "{}", "connect", "cigale-none", "-scope", "organisation", "-owner", org, "-values", "extra")
	if code != 2 || strings.Count(errs, "\n") != 1 {
		t.Fatalf("a stray argument: %d %q", code, errs)
	}
}

// disconnect of a platform login is refused as the API refuses its delete:
// the box's own credentials are not changed from the terminal either.
func TestConnectionsDisconnectRefusesAPlatformLogin(t *testing.T) {
	conn := cliDB(t)
	ctx := context.Background()
	var serverID string
	if err := conn.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
		VALUES ('cigale', 'C', 'http', 'http://127.0.0.1:1/mcp', 'token', '{}') RETURNING id`).Scan(&serverID); err != nil {
		t.Fatal(err)
	}
	id := connectionstest.Insert(t, conn, serverID, "platform", "")
	connectionstest.SetConnected(t, conn, id, "box")
	code, out, errs := runConn(t, connectionsCommand, "", "disconnect", id)
	if code != 1 || out != "" || !strings.Contains(errs, "platform-scope logins are reserved") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("disconnect of a platform login: %d %q %q", code, out, errs)
	}
	if st := connectionstest.Status(t, conn, id); st != "connected" {
		t.Fatalf("the platform login is %s after a refused disconnect", st)
	}
}
