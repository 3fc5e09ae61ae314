package main

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// cliOrg is an organisation to own the terminal's logins, which name their
// scope and owner.
func cliOrg(t *testing.T, conn *pgx.Conn) string {
	t.Helper()
	var id string
	if err := conn.QueryRow(context.Background(), `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// connect needs -scope (there is no default), and a platform-scope login is
// refused as the API refuses it: nothing is written, and the refusal says
// where the box's own credentials come from.
func TestConnectionsConnectScope(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"connect", "cigale"}, "-scope is required"},
		{[]string{"connect", "cigale", "-owner", "00000000-0000-0000-0000-000000000001"}, "-scope is required"},
		{[]string{"connect", "cigale", "-scope", "platform"}, "platform-scope logins are reserved"},
		{[]string{"connect", "cigale", "-scope", "team", "-owner", "x"}, "is not organisation, guild or agent"},
		{[]string{"connect", "00000000-0000-0000-0000-000000000001", "-scope", "guild"}, "keeps its own scope"},
	} {
		code, out, errs := runConn(t, connectionsCommand, "sk-key\n", c.args...)
		if code != 2 || out != "" || !strings.Contains(errs, c.want) || strings.Count(errs, "\n") != 1 {
			t.Errorf("connections %v: exit %d, stdout %q, stderr %q", c.args, code, out, errs)
		}
	}
	code, _, errs := runConn(t, connectionsCommand, "", "connect", "cigale", "-scope", "platform")
	if !strings.Contains(errs, "environment") || !strings.Contains(errs, "-scope organisation, guild or agent") {
		t.Errorf("the refusal does not say where a platform login comes from: %d %q", code, errs)
	}

	// A platform login already on the box (made before the rule) is not
	// reconnected from the terminal either: its credential stays as it is.
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
	defer func() { _ = conn.Close(ctx) }()
	var serverID string
	if err := conn.QueryRow(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config)
		VALUES ('cigale', 'C', 'http', 'http://127.0.0.1:1/mcp', 'token', '{}') RETURNING id`).Scan(&serverID); err != nil {
		t.Fatal(err)
	}
	id := connectionstest.Insert(t, conn, serverID, "platform", "")
	code, out, errs := runConn(t, connectionsCommand, "sk-key\n", "connect", id)
	var creds string
	if err := conn.QueryRow(ctx, `SELECT count(*)::text FROM connection_credentials`).Scan(&creds); err != nil {
		t.Fatal(err)
	}
	status := connectionstest.Status(t, conn, id)
	if code != 1 || !strings.Contains(errs, "platform-scope logins are reserved") || strings.Contains(out+errs, "sk-key") || creds != "0" || status != "pending" {
		t.Fatalf("reconnect of a platform login: exit %d, %q %q, credentials %s, status %s", code, out, errs, creds, status)
	}
}
