package mcppool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// A listing past the caps (more than MaxListedTools tools, more than
// MaxListPages pages, or pages that loop) fails with why, and the stored
// listing stays as it was.
func TestListingPastTheCapsIsRefused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	serve := func(tools, perPage int) string {
		s := server.NewMCPServer("big", "1.0.0", server.WithToolCapabilities(false), server.WithPaginationLimit(perPage))
		for i := range tools {
			s.AddTool(mcp.NewTool(fmt.Sprintf("tool_%05d", i)), okHandler)
		}
		srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	db := testdb.New(t)
	// A thousand and one pages are as many round trips: the listing bound is
	// a failure bound here, wide enough for a loaded machine, not what is
	// tested (the caps are).
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{}}, ListTimeout: 10 * time.Minute})
	t.Cleanup(p.Close)
	for _, c := range []struct {
		name, url, want string
	}{
		{"manytools", serve(mcppool.MaxListedTools+1, 5000), "manytools: it lists more than 10000 tools"},
		{"manypages", serve(mcppool.MaxListPages+1, 1), "manypages: tools/list goes on past 1000 pages"},
		{"looping", loopingPages(t), "looping: tools/list handed back a cursor it had already given"},
	} {
		id := everythingConnection(t, db, c.name, "http", c.url, map[string]any{})
		if err := mcppool.StoreTools(ctx, db, id, []mcppool.Tool{{RemoteName: "kept"}}); err != nil {
			t.Fatal(err)
		}
		_, err := p.Sync(ctx, id)
		var peer *mcppool.PeerError
		if !errors.As(err, &peer) || !strings.HasPrefix(err.Error(), c.want) {
			t.Fatalf("%s: %v, want %q", c.name, err, c.want)
		}
		if stored, _ := mcppool.Stored(ctx, db, id); len(stored) != 1 || stored[0].RemoteName != "kept" {
			t.Fatalf("%s: the stored listing changed: %v", c.name, stored)
		}
	}
}

// loopingPages is a stateless MCP peer whose tools/list pages point back at
// each other: a, then b, then a again.
func loopingPages(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Cursor string `json:"cursor"`
			} `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if len(req.ID) == 0 {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result any
		switch req.Method {
		case "initialize":
			result = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "looping", "version": "1"}}
		case "tools/list":
			next := "a"
			if req.Params.Cursor == "a" {
				next = "b"
			}
			result = map[string]any{"tools": []any{map[string]any{"name": "t_" + next, "inputSchema": map[string]any{"type": "object"}}},
				"nextCursor": next}
		default:
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": map[string]any{"code": -32601, "message": "no such method"}})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
