package mcppool_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
)

// BenchmarkSyncFiveThousandTools lists a server of 5,000 tools (ten pages
// of 500) through the pool and stores the listing (one transaction): the
// work of a Refresh or of a run start that finds the stored listing stale.
// Figures in docs/benchmarks.md:
//
//	go test ./internal/mcppool/ -run '^$' -bench BenchmarkSyncFiveThousandTools -benchtime 5x -count 3
func BenchmarkSyncFiveThousandTools(b *testing.B) {
	s := server.NewMCPServer("many", "1.0.0", server.WithToolCapabilities(false), server.WithPaginationLimit(500))
	for i := range 5000 {
		s.AddTool(mcp.NewTool(fmt.Sprintf("tool_%04d", i), mcp.WithDescription("one of many"),
			mcp.WithString("q", mcp.Required()), mcp.WithNumber("limit")), okHandler)
	}
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	b.Cleanup(srv.Close)
	db := testdb.New(b)
	id := everythingConnection(b, db, "many", "http", srv.URL, map[string]any{})
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}})
	b.Cleanup(p.Close)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		tools, err := p.Sync(ctx, id)
		if err != nil || len(tools) != 5000 {
			b.Fatalf("%d tools, %v", len(tools), err)
		}
	}
}
