package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

// TestConnectFailureLeavesNoPendingRow: a first connect that is refused in the
// browser, or whose key is missing, removes the connection it created; a
// failed reconnect of an existing login keeps that login.
func TestConnectFailureLeavesNoPendingRow(t *testing.T) {
	dbURL := testdb.URL(t)
	k1, _ := secret.GenerateKey("k1")
	t.Setenv("DATABASE_URL", dbURL)
	t.Setenv("REDIS_URL", "redis://127.0.0.1:6379/5")
	t.Setenv("GUILDS_ENCRYPTION_KEY", k1)
	t.Setenv("GUILDS_AUTH_MODE", "token")
	t.Setenv("GUILDS_OAUTH_ALLOW_PRIVATE", "1") // the test servers listen on loopback
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	org := cliOrg(t, conn)
	cfg := fmt.Sprintf(`{"provider":"oauth2","oauth":{"auth_url":%q,"token_url":%q,"client_id":"cid","auth_style":"none"}}`, srv.URL+"/authorize", srv.URL+"/token")
	if _, err := conn.Exec(ctx, `INSERT INTO mcp_servers (slug, name, transport, auth, config) VALUES ('notionish', 'N', 'http', 'oauth', $1), ('cigale', 'C', 'http', 'token', '{}')`, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `UPDATE mcp_servers SET url = $1 WHERE slug = 'cigale'`, keyMCPServer(t, "sk-one-key")); err != nil {
		t.Fatal(err)
	}

	count := func(slug string) int { return len(connectionstest.OfServer(t, conn, slug)) }

	// The operator refuses the authorisation in the browser.
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- connectionsCommand(ctx, []string{"connect", "notionish", "-scope", "organisation", "-owner", org, "-timeout", "30s"}, strings.NewReader(""), pw, &stderr)
		_ = pw.Close()
	}()
	br := bufio.NewReader(pr)
	var authURL string
	for authURL == "" {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("no authorization URL; stderr: %s", stderr.String())
		}
		if strings.HasPrefix(line, srv.URL+"/authorize?") {
			authURL = strings.TrimSpace(line)
		}
	}
	go func() { _, _ = io.Copy(io.Discard, br) }()
	if count("notionish") != 1 {
		t.Fatal("connect did not create a pending connection")
	}
	u, _ := url.Parse(authURL)
	q := u.Query()
	resp, err := http.Get(q.Get("redirect_uri") + "?" + url.Values{"state": {q.Get("state")}, "error": {"access_denied"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(stderr.String(), "access_denied") {
			t.Fatalf("refused connect: exit %d, stderr %q", code, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("connect did not finish")
	}
	if n := count("notionish"); n != 0 {
		t.Fatalf("a refused first connect left %d connection rows", n)
	}

	// A key connect with no key on stdin.
	code, _, errs := runConn(t, connectionsCommand, "\n", "connect", "cigale", "-scope", "organisation", "-owner", org)
	if code != 1 || count("cigale") != 0 {
		t.Fatalf("empty key: exit %d, %d rows, stderr %q", code, count("cigale"), errs)
	}

	// A key the server refuses connects nothing and leaves no row.
	code, _, errs = runConn(t, connectionsCommand, "sk-wrong\n", "connect", "cigale", "-scope", "organisation", "-owner", org)
	if code != 1 || count("cigale") != 0 || !strings.Contains(errs, "rejected") || strings.Contains(errs, "sk-wrong") {
		t.Fatalf("rejected key: exit %d, %d rows, stderr %q", code, count("cigale"), errs)
	}

	// Pinned prices needs its coins, which the terminal form does not take:
	// refused before any key is read, and nothing is left behind.
	if _, err := conn.Exec(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, auth, config) VALUES
		('pinned', 'P', 'adapter', 'http', 'token', '{"adapter":"pinned_prices"}')`); err != nil {
		t.Fatal(err)
	}
	code, _, errs = runConn(t, connectionsCommand, "CG-key\n", "connect", "pinned", "-scope", "organisation", "-owner", org)
	if code != 1 || count("pinned") != 0 || !strings.Contains(errs, "POST /api/mcp/connect") {
		t.Fatalf("pinned prices from the terminal: exit %d, %d rows, stderr %q", code, count("pinned"), errs)
	}

	// An existing login survives a failed reconnect.
	if code, _, errs := runConn(t, connectionsCommand, "sk-one-key\n", "connect", "cigale", "-scope", "organisation", "-owner", org); code != 0 {
		t.Fatalf("key connect: %d %s", code, errs)
	}
	if code, _, _ := runConn(t, connectionsCommand, "\n", "connect", "cigale", "-scope", "organisation", "-owner", org); code != 1 || count("cigale") != 1 {
		t.Fatalf("failed reconnect: exit %d, %d rows", code, count("cigale"))
	}
}
