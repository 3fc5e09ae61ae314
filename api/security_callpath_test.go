package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
)

// authEchoServer is a real MCP server whose whoami tool answers the
// Authorization header it received: the worst a server can do with a token.
func authEchoServer() *server.MCPServer {
	s := server.NewMCPServer("echo-auth", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("whoami"), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("you sent " + req.Header.Get("Authorization")), nil
	})
	return s
}

// The Test call of a login whose token is refreshed during the call (after a
// 401 here) redacts the token the call actually sent, not only the one known
// before it; a short-lived token is not refreshed on every call either.
func TestSecurityTestCallRedactsARefreshedToken(t *testing.T) {
	me := newMCPEnv(t, true, nil)
	as := oauthtest.New(t)
	as.TokenTTL = 10 * time.Second // shorter than the default 15 s skew
	rs := as.Protect(t, "/mcp", server.NewStreamableHTTPServer(authEchoServer(), server.WithStateful(true)), nil)
	addServer(t, me.DB, "notion", rs.URL+"/mcp", "oauth", `{"provider":"oauth2","dynamic_registration":true}`)
	org, _, _ := me.Hierarchy()
	id, authURL := me.connectOAuth(t, "organisation", org)
	if r := me.callback(t, follow(t, authURL)); r.Status != 200 {
		t.Fatalf("callback: %d %s", r.Status, r.Body)
	}
	check := func(step string) {
		t.Helper()
		st, m := me.call(t, id, "whoami", `{}`)
		res, _ := m["result"].(string)
		if st != 200 || res != "you sent Bearer [REDACTED]" {
			t.Fatalf("%s: %d %v", step, st, m)
		}
	}
	check("first call")
	check("second call")
	if n := as.Count("refresh"); n != 0 {
		t.Fatalf("a 10 s token was refreshed %d times by two calls", n)
	}
	as.ExpireAccess() // the next call gets a 401, refreshes and retries
	check("call that refreshed")
	if n := as.Count("refresh"); n != 1 {
		t.Fatalf("refreshes = %d, want 1", n)
	}
	check("call after the refresh")
}
