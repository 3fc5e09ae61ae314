package main

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcpoauth/oauthtest"
)

// keyMCPServer is an MCP server on loopback that lists one tool to a caller
// holding one of the accepted keys and answers 401 to anyone else, the way a
// token server such as Cigale does.
func keyMCPServer(t *testing.T, keys ...string) string {
	t.Helper()
	s := server.NewMCPServer("key-test", "1.0.0")
	s.AddTool(mcp.NewTool("search"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText("ok"), nil
	})
	h := oauthtest.BearerOnly(server.NewStreamableHTTPServer(s), func(tok string) bool { return slices.Contains(keys, tok) },
		func() string { return "" })
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return hs.URL
}
