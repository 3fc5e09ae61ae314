package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/connections/connectionstest"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/testdb"
)

func runConn(t *testing.T, fn func(context.Context, []string, io.Reader, io.Writer, io.Writer) int, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := fn(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func TestConnectionsUsage(t *testing.T) {
	for _, args := range [][]string{nil, {"bogus"}, {"status"}, {"status", "not-a-uuid"}, {"list", "x"}, {"connect"}, {"connect", "x", "-scope", "guild"}, {"refresh", "a", "b"}} {
		code, _, stderr := runConn(t, connectionsCommand, "", args...)
		if code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("connections %v: exit %d, stderr %q", args, code, stderr)
		}
	}
	for _, args := range [][]string{nil, {"spin"}, {"rotate", "-batch", "0"}, {"rotate", "extra"}} {
		code, _, stderr := runConn(t, keysCommand, "", args...)
		if code != 2 || strings.Count(stderr, "\n") != 1 {
			t.Errorf("keys %v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// cliTokenServer is a minimal OAuth token endpoint checking PKCE.
type cliTokenServer struct {
	mu         sync.Mutex
	challenges map[string]string
	n          int
}

func (s *cliTokenServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.PostForm.Get("grant_type") == "authorization_code" {
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if s.challenges[r.PostForm.Get("code")] != base64.RawURLEncoding.EncodeToString(sum[:]) {
			w.WriteHeader(400)
			fmt.Fprint(w, `{"error":"invalid_grant"}`)
			return
		}
	}
	s.n++
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": fmt.Sprintf("AT-cli-%d", s.n), "refresh_token": fmt.Sprintf("RT-cli-%d", s.n), "expires_in": 3600})
}

func TestConnectionsLifecycle(t *testing.T) {
	dbURL := testdb.URL(t)
	k1, _ := secret.GenerateKey("k1")
	t.Setenv("DATABASE_URL", dbURL)
	t.Setenv("REDIS_URL", "redis://127.0.0.1:6379/5")
	t.Setenv("GUILDS_ENCRYPTION_KEY", k1)
	t.Setenv("GUILDS_AUTH_MODE", "token")
	ts := &cliTokenServer{challenges: map[string]string{}}
	srv := httptest.NewServer(ts)
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
	if _, err := conn.Exec(ctx, `UPDATE mcp_servers SET url = $1 WHERE slug = 'cigale'`, keyMCPServer(t, "sk-secret-key")); err != nil {
		t.Fatal(err)
	}

	// OAuth connect: the test plays the browser. The token endpoint listens
	// on loopback, which the outbound policy allows only when told to.
	t.Setenv("GUILDS_OAUTH_ALLOW_PRIVATE", "1")
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
	u, _ := url.Parse(authURL)
	q := u.Query()
	ts.mu.Lock()
	ts.challenges["the-code"] = q.Get("code_challenge")
	ts.mu.Unlock()
	cb := q.Get("redirect_uri") + "?" + url.Values{"state": {q.Get("state")}, "code": {"the-code"}}.Encode()
	resp, err := http.Get(cb)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case code := <-done:
		if code != 0 || resp.StatusCode != 200 {
			t.Fatalf("connect exit %d (callback %d); stderr: %s", code, resp.StatusCode, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("connect did not finish")
	}

	// The MCP server listens on loopback, which the outbound policy refuses
	// unless the operator allows private addresses; no key is stored then.
	t.Setenv("GUILDS_OAUTH_ALLOW_PRIVATE", "")
	code, out, errs := runConn(t, connectionsCommand, "sk-secret-key\n", "connect", "cigale", "-scope", "organisation", "-owner", org)
	if code == 0 || !strings.Contains(errs, "GUILDS_OAUTH_ALLOW_PRIVATE=1") {
		t.Fatalf("key connect to a loopback server by default: %d %s %s", code, out, errs)
	}
	t.Setenv("GUILDS_OAUTH_ALLOW_PRIVATE", "1")

	// Key connect reads the key from stdin, never argv.
	code, out, errs = runConn(t, connectionsCommand, "sk-secret-key\n", "connect", "cigale", "-scope", "organisation", "-owner", org)
	if code != 0 || !strings.Contains(out, "connected cigale") {
		t.Fatalf("key connect: %d %s %s", code, out, errs)
	}

	code, out, errs = runConn(t, connectionsCommand, "", "list")
	if code != 0 || strings.Count(out, "connected") != 2 || strings.Contains(out, "sk-secret") || strings.Contains(out, "AT-cli") {
		t.Fatalf("list: %d\n%s%s", code, out, errs)
	}
	oauthID := connectionstest.OnlyOf(t, conn, "notionish")

	for _, sub := range []string{"status", "refresh", "test"} {
		code, out, errs = runConn(t, connectionsCommand, "", sub, oauthID)
		if code != 0 || strings.Contains(out+errs, "AT-cli") || strings.Contains(out+errs, "RT-cli") {
			t.Fatalf("%s: %d\n%s%s", sub, code, out, errs)
		}
	}
	if !strings.Contains(out, "ok ") {
		t.Fatalf("test output: %s", out)
	}
	// A login whose row names a server is tested by asking it, through the
	// pool: a tools/list with the stored key.
	keyID := connectionstest.OnlyOf(t, conn, "cigale")
	if code, out, errs := runConn(t, connectionsCommand, "", "test", keyID); code != 0 || !strings.Contains(out, "tools listed") || strings.Contains(out+errs, "sk-secret") {
		t.Fatalf("test of the key login: %d %s %s", code, out, errs)
	}

	// Rotate to a new key, then run with only the new key.
	k2, _ := secret.GenerateKey("k2")
	t.Setenv("GUILDS_ENCRYPTION_KEY", k2+","+k1)
	code, out, errs = runConn(t, keysCommand, "", "rotate", "-batch", "1")
	if code != 0 || !strings.Contains(out, "re-encrypted 2 credentials") {
		t.Fatalf("rotate: %d %s %s", code, out, errs)
	}
	t.Setenv("GUILDS_ENCRYPTION_KEY", k2)
	code, out, errs = runConn(t, connectionsCommand, "", "test", oauthID)
	if code != 0 {
		t.Fatalf("test after rotation: %d %s %s", code, out, errs)
	}

	code, _, errs = runConn(t, connectionsCommand, "", "disconnect", oauthID)
	if code != 0 {
		t.Fatalf("disconnect: %s", errs)
	}
	code, _, errs = runConn(t, connectionsCommand, "", "test", oauthID)
	if code != 1 || !strings.Contains(errs, "reconnected") || strings.Count(errs, "\n") != 1 {
		t.Fatalf("test after disconnect: %d %q", code, errs)
	}
}

// configMCPServer is an MCP server on loopback that serves requests carrying
// the accepted X-Workspace header and answers 401 to the others.
func configMCPServer(t *testing.T, workspace string) string {
	t.Helper()
	s := server.NewMCPServer("config-test", "1.0.0")
	s.AddTool(mcp.NewTool("search"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	h := server.NewStreamableHTTPServer(s)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Workspace") != workspace {
			http.Error(w, "unknown workspace", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// A no-auth-with-config server: the fields are read from stdin like a key,
// checked against the server, and only accepted values are stored.
func TestConnectionsConnectConfig(t *testing.T) {
	dbURL := testdb.URL(t)
	k1, _ := secret.GenerateKey("k1")
	t.Setenv("DATABASE_URL", dbURL)
	t.Setenv("REDIS_URL", "redis://127.0.0.1:6379/5")
	t.Setenv("GUILDS_ENCRYPTION_KEY", k1)
	t.Setenv("GUILDS_AUTH_MODE", "token")
	t.Setenv("GUILDS_OAUTH_ALLOW_PRIVATE", "1") // the test server listens on loopback
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close(ctx) }()
	org := cliOrg(t, conn)
	const cfg = `{"provider":"config","fields":[{"name":"workspace","header":"X-Workspace"},
		{"name":"region","header":"X-Region","secret":false,"optional":true}]}`
	if _, err := conn.Exec(ctx, `INSERT INTO mcp_servers (slug, name, transport, url, auth, config) VALUES ('acme', 'Acme', 'http', $1, 'none', $2)`,
		configMCPServer(t, "ws-cli-5e2b"), cfg); err != nil {
		t.Fatal(err)
	}
	state := func() string {
		var creds int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM connection_credentials`).Scan(&creds); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d %d", connectionstest.Count(t, conn), creds)
	}

	for _, c := range []struct{ stdin, want string }{
		{"", "reading workspace from stdin"},
		{"ws-wrong-1111\neu\n", "refused the configured values"},
	} {
		code, out, errs := runConn(t, connectionsCommand, c.stdin, "connect", "acme", "-scope", "organisation", "-owner", org)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Contains(out+errs, "ws-wrong") || state() != "0 0" {
			t.Fatalf("connect with %q: %d %s %s (logins, credentials: %s)", c.stdin, code, out, errs, state())
		}
	}
	code, out, errs := runConn(t, connectionsCommand, "ws-cli-5e2b\neu-west-1\n", "connect", "acme", "-scope", "organisation", "-owner", org)
	if code != 0 || !strings.Contains(out, "connected acme") || !strings.Contains(errs, "1 tools listed") ||
		strings.Contains(out+errs, "ws-cli") || strings.Contains(out+errs, "eu-west-1") || state() != "1 1" {
		t.Fatalf("config connect: %d %s %s (logins, credentials: %s)", code, out, errs, state())
	}
	id := connectionstest.OnlyOf(t, conn, "acme")
	for _, sub := range []string{"status", "test", "refresh"} {
		code, out, errs = runConn(t, connectionsCommand, "", sub, id)
		if code != 0 || strings.Contains(out+errs, "ws-cli") {
			t.Fatalf("%s: %d %s %s", sub, code, out, errs)
		}
	}
	if !strings.Contains(out, "healthy") {
		t.Fatalf("status after a refresh: %s", out)
	}
}
