package mcppool_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/guilds/guilds/internal/connstore"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// badPeer is a catalog row whose server cannot be used as an MCP server,
// and the words its error must hold.
type badPeer struct {
	name      string
	transport string
	handler   http.HandlerFunc // http rows
	config    map[string]any   // stdio rows: command and args
	want      string
}

func badPeers() []badPeer {
	page := func(status int) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(status)
			_, _ = io.WriteString(w, "<!doctype html><html><body>Welcome</body></html>")
		}
	}
	typed := func(ct, body string) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ct)
			_, _ = io.WriteString(w, body)
		}
	}
	secretArg := "--token=s3cret-in-the-args"
	return []badPeer{
		{name: "html", transport: "http", handler: page(200), want: "answered with an HTML page, not MCP"},
		{name: "html404", transport: "http", handler: page(404), want: "answered HTTP 404 with an HTML page, not MCP"},
		{name: "html500", transport: "http", handler: page(500), want: "answered HTTP 500 with an HTML page, not MCP"},
		{name: "plain404", transport: "http", handler: http.NotFound, want: "no Streamable HTTP MCP endpoint at this URL"},
		{name: "text", transport: "http", handler: typed("text/plain", "hello"), want: "answered with text/plain, not MCP"},
		{name: "notjson", transport: "http", handler: typed("application/json", "hello, world"), want: "not a JSON-RPC message, not MCP"},
		{name: "notrpc", transport: "http", handler: typed("application/json", `{"hello":"world"}`), want: "not a JSON-RPC message, not MCP"},
		{name: "nocmd", transport: "stdio", config: map[string]any{"command": "guilds-no-such-mcp-server", "args": []string{secretArg}},
			want: `the server's command "guilds-no-such-mcp-server" was not found on this machine`},
		{name: "nopath", transport: "stdio", config: map[string]any{"command": "/nonexistent/guilds-mcp", "args": []string{secretArg}},
			want: `the server's command "/nonexistent/guilds-mcp" was not found on this machine`},
		{name: "ends", transport: "stdio", config: map[string]any{"command": "true", "args": []string{secretArg}},
			want: "the process ended before it answered the MCP handshake"},
	}
}

func (b badPeer) connection(t *testing.T, db *pgxpool.Pool) string {
	t.Helper()
	if b.transport == "stdio" {
		return everythingConnection(t, db, "bad-"+b.name, "stdio", "", b.config)
	}
	srv := httptest.NewServer(b.handler)
	t.Cleanup(srv.Close)
	return everythingConnection(t, db, "bad-"+b.name, "http", srv.URL, map[string]any{})
}

// A server that is not MCP (an HTML page, a 404, another content type, a
// body that is not JSON-RPC) or a stdio command that is not on this machine
// or ends at once fails its listing at once with an error that says so,
// through the pool (a Refresh, a run start) and through the turn-on check
// (the API's 422 server_unlisted), and nothing is stored. The error names
// the command, never its arguments.
func TestBadPeersFailWithAClearError(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	ctx := context.Background()
	for _, b := range badPeers() {
		t.Run(b.name, func(t *testing.T) {
			id := b.connection(t, db)
			p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
			defer p.Close()
			_, err := p.Sync(ctx, id)
			var peer *mcppool.PeerError
			if !errors.As(err, &peer) || err.Error() != peer.Error() || !strings.Contains(err.Error(), b.want) {
				t.Fatalf("pool listing: %v, want a *PeerError saying %q", err, b.want)
			}
			if !strings.HasPrefix(err.Error(), "bad-"+b.name+": ") || strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("pool listing error %q: names no server or holds an argument", err)
			}
			if stored, _ := mcppool.Stored(ctx, db, id); len(stored) != 0 {
				t.Fatalf("%d tools stored from a server that is not MCP", len(stored))
			}
			row, err := connstore.Get(ctx, db, mustID(t, id))
			if err != nil {
				t.Fatal(err)
			}
			_, err = mcppool.Checker{DB: db}.CheckOpen(ctx, row)
			var unlisted *mcppool.UnlistedError
			if !errors.As(err, &unlisted) || !strings.Contains(unlisted.Reason, b.want) || strings.Contains(err.Error(), "s3cret") {
				t.Fatalf("turn-on check: %v, want an *UnlistedError saying %q", err, b.want)
			}
		})
	}
}

// A server that never answers (an HTTP server that holds the request, a
// stdio process that prints something that is not JSON-RPC and then says
// nothing) fails at the list timeout (the catalog row's own here, for the
// pool and for the turn-on check) with a message that says so; the bound is
// short only to keep the test short, and no duration is asserted.
func TestSilentPeerFailsAtTheListTimeout(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	silent := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // read, so the server notices the client leave
		<-r.Context().Done()
	}))
	t.Cleanup(silent.Close)
	db := testdb.New(t)
	rows := map[string]string{
		"silent": everythingConnection(t, db, "silent", "http", silent.URL, map[string]any{"list_timeout_seconds": 1}),
		"garbled": everythingConnection(t, db, "garbled", "stdio", "", map[string]any{"list_timeout_seconds": 1,
			"command": "sh", "args": []string{"-c", "echo this is not JSON-RPC; exec sleep 300"}}),
	}
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	defer p.Close()
	for slug, id := range rows {
		_, err := p.Sync(ctx, id)
		var timeout *mcppool.TimeoutError
		if !errors.As(err, &timeout) || err.Error() != slug+": tools/list did not answer within 1s" {
			t.Fatalf("pool listing of %s: %v", slug, err)
		}
		row, err := connstore.Get(ctx, db, mustID(t, id))
		if err != nil {
			t.Fatal(err)
		}
		_, err = mcppool.Checker{DB: db}.CheckOpen(ctx, row)
		if err == nil || !strings.Contains(err.Error(), slug+" could not list its tools: it did not answer within 1s (config.list_timeout_seconds") {
			t.Fatalf("turn-on check of %s: %v", slug, err)
		}
	}
}

func mustID(t *testing.T, id string) connstore.ID {
	t.Helper()
	cid, err := connstore.ParseID(id)
	if err != nil {
		t.Fatal(err)
	}
	return cid
}
