package mcppool_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// A server that pages tools/list (two tools a page) is listed whole: the
// pool follows nextCursor to the last page and stores every tool.
func TestListFollowsEveryPage(t *testing.T) {
	s := server.NewMCPServer("paged", "1.0.0", server.WithToolCapabilities(false), server.WithPaginationLimit(2))
	for i := range 7 {
		s.AddTool(mcp.NewTool(fmt.Sprintf("tool_%d", i)), okHandler)
	}
	var lists atomic.Int64
	h := server.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		lists.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	db := testdb.New(t)
	id := everythingConnection(t, db, "paged", "http", srv.URL, map[string]any{})
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	t.Cleanup(p.Close)
	listed, err := p.Sync(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if len(listed) != 7 {
		t.Fatalf("listed %d tools of 7", len(listed))
	}
	if stored, _ := mcppool.Stored(context.Background(), db, id); len(stored) != 7 {
		t.Fatalf("stored %d tools of 7", len(stored))
	}
	if n := lists.Load(); n < 4 {
		t.Fatalf("%d requests: the pages were not each asked for", n)
	}
}

func okHandler(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText("ok"), nil
}
