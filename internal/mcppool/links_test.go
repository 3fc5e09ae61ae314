package mcppool_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

// linkServer answers "links" with resource links of every kind the pool
// tells apart, and serves the resources behind them; reads counts the
// resources/read requests. Without resources it declares no resource
// capability.
func linkServer(withResources bool, reads *atomic.Int64) *server.MCPServer {
	opts := []server.ServerOption{server.WithToolCapabilities(false)}
	if withResources {
		opts = append(opts, server.WithResourceCapabilities(false, false))
	}
	s := server.NewMCPServer("links", "1.0.0", opts...)
	size := func(n int64) *int64 { return &n }
	long := strings.Repeat("é", 20<<10) // 40 KiB: cut at 32 KiB, on a character boundary
	text := map[string]string{
		"file:///notes.txt": "tide table: 06:12",
		"file:///leak.txt":  "the key is " + mediaToken,
		"file:///long.txt":  long,
		"file:///five.txt":  "five",
	}
	if withResources {
		for uri, body := range text {
			s.AddResource(mcp.NewResource(uri, uri, mcp.WithMIMEType("text/plain")),
				func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
					reads.Add(1)
					return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: body}}, nil
				})
		}
		s.AddResource(mcp.NewResource("file:///gone.txt", "gone", mcp.WithMIMEType("text/plain")),
			func(context.Context, mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
				reads.Add(1)
				return nil, errors.New("the file was removed")
			})
	}
	link := func(uri, name, mime string, n *int64) mcp.Content {
		l := mcp.NewResourceLink(uri, name, "", mime)
		l.Size = n
		return l
	}
	s.AddTool(mcp.NewTool("links"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			mcp.NewTextContent("found:"),
			link("file:///notes.txt", "notes", "text/plain", nil),
			link("file:///report.pdf", "report", "application/pdf", size(900)),
			link("file:///big.txt", "big", "text/plain", size(1<<20)),
			link("ui://widget", "widget", "text/html", nil),
			link("file:///gone.txt", "gone", "text/plain", size(10)),
			link("file:///leak.txt", "leak", "text/plain; charset=utf-8", nil),
			link("file:///long.txt", "long", "text/plain", nil),
			link("file:///five.txt", "five", "text/plain", nil), // the fifth readable link: listed only
		}}, nil
	})
	return s
}

// Small text resource links are read over the call's session and login and
// given with the link: cut at 32 KiB, redacted, at most four per result;
// a failed read is described, never fatal; other links are listed only.
func TestResourceLinksAreRead(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	var reads atomic.Int64
	id := addConnection(t, db, "linked", servePeer(t, linkServer(true, &reads), mediaToken), "oauth", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {mediaToken}}}})
	t.Cleanup(p.Close)
	parts, err := p.CallParts(ctx, id, "links", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := tools.JoinParts(parts, nil)
	kept := strings.Repeat("é", 16<<10)
	want := strings.Join([]string{
		"found:",
		"[resource link: notes <file:///notes.txt>, text/plain]\ntide table: 06:12",
		"[resource link: report <file:///report.pdf>, application/pdf]",
		"[resource link: big <file:///big.txt>, text/plain]",
		"[app ui://widget; not kept]", // an MCP App, read and kept by a run's call path (ADR 0620)
		"[resource link: gone <file:///gone.txt>, text/plain]\n[could not read it: internal error: the file was removed]",
		"[resource link: leak <file:///leak.txt>, text/plain; charset=utf-8]\nthe key is [REDACTED]",
		"[resource link: long <file:///long.txt>, text/plain]\n" + kept + fmt.Sprintf("\n[… %d more bytes of this resource not shown]", 40<<10-32<<10),
		"[resource link: five <file:///five.txt>, text/plain]",
	}, "\n")
	if got != want {
		t.Errorf("got:\n%.2000s\nwant:\n%.2000s", got, want)
	}
	if n := reads.Load(); n != 4 {
		t.Errorf("%d resources read, want 4", n)
	}
}

// A server that declares no resources is not asked for any.
func TestResourceLinksOfAServerWithoutResources(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	var reads atomic.Int64
	id := addConnection(t, db, "unlinked", servePeer(t, linkServer(false, &reads), mediaToken), "oauth", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {mediaToken}}}})
	t.Cleanup(p.Close)
	got, err := p.Call(ctx, id, "links", nil)
	if err != nil || !strings.Contains(got, "[resource link: notes <file:///notes.txt>, text/plain]\n[resource link: report") {
		t.Fatalf("Call = %q, %v", got, err)
	}
}
