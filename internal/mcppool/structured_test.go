package mcppool_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

const weatherSchema = `{"type":"object","required":["temperature","conditions"],
 "properties":{"temperature":{"type":"number"},"conditions":{"type":"string"}}}`

// structuredServer has tools that declare an output schema and answer with
// structuredContent that follows it or not, with and without a text copy.
func structuredServer() *server.MCPServer {
	s := server.NewMCPServer("structured", "1.0.0", server.WithToolCapabilities(false))
	add := func(name string, r *mcp.CallToolResult) {
		s.AddTool(mcp.NewTool(name, mcp.WithRawOutputSchema(json.RawMessage(weatherSchema))),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) { return r, nil })
	}
	good := map[string]any{"temperature": 21.5, "conditions": "<sunny> & dry"}
	pretty, _ := json.MarshalIndent(good, "", "    ")
	add("pretty", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(string(pretty))}, StructuredContent: good})
	add("bare", &mcp.CallToolResult{StructuredContent: good})
	add("summary", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent("Sunny, 21.5 degrees.")}, StructuredContent: good})
	add("wrong", &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(`{"temperature":"warm"}`),
		mcp.NewImageContent(base64.StdEncoding.EncodeToString(pngBytes), "image/png")},
		StructuredContent: map[string]any{"temperature": "warm"}})
	add("failed", &mcp.CallToolResult{IsError: true, Content: []mcp.Content{mcp.NewTextContent("no station")},
		StructuredContent: map[string]any{"error": "no station"}})
	// An image with its own data repeated in structuredContent (as the
	// filesystem server's read_media_file does), no schema.
	img := mcp.NewImageContent(base64.StdEncoding.EncodeToString(pngBytes), "image/png")
	s.AddTool(mcp.NewTool("media"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{img}, StructuredContent: map[string]any{"content": []any{img}}}, nil
	})
	return s
}

// servePeer serves an MCP server over Streamable HTTP behind a bearer check.
func servePeer(t *testing.T, s *server.MCPServer, token string) string {
	t.Helper()
	h := server.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// structuredContent is checked against the listed output schema: valid, the
// model gets it once and compact; invalid, the result is an error that says
// why and keeps nothing of the answer.
func TestStructuredContentIsCheckedAndSentOnce(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	id := addConnection(t, db, "weather", servePeer(t, structuredServer(), mediaToken), "oauth", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {mediaToken}}}})
	t.Cleanup(p.Close)
	call := func(tool string) string {
		t.Helper()
		parts, err := p.CallParts(ctx, id, tool, nil)
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		return tools.JoinParts(parts, nil)
	}

	// Not listed yet: nothing to check against, the answer passes.
	if got := call("wrong"); strings.HasPrefix(got, "ERROR") {
		t.Fatalf("checked before any listing: %q", got)
	}
	listed, err := p.Sync(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range listed {
		if tl.RemoteName == "pretty" && !strings.Contains(string(tl.OutputSchema), `"temperature"`) {
			t.Fatalf("the listing lost the output schema: %s", tl.OutputSchema)
		}
	}

	compact := `{"conditions":"<sunny> & dry","temperature":21.5}`
	for tool, want := range map[string]string{
		"pretty":  compact,                               // the text copy, made compact
		"bare":    compact,                               // no content: the JSON once
		"summary": "Sunny, 21.5 degrees.",                // the server's own words, not the JSON again
		"failed":  "ERROR: no station",                   // an error result is not checked
		"media":   "[image: image/png, 308 B; not kept]", // no base64 through structuredContent
	} {
		if got := call(tool); got != want {
			t.Errorf("%s = %q, want %q", tool, got, want)
		}
	}
	got := call("wrong")
	want := "ERROR: the tool's structured result does not match its output schema, so it was not kept: " +
		"at (root): missing property 'conditions'; at /temperature: got string, want number"
	if got != want {
		t.Errorf("wrong = %q\nwant %q", got, want)
	}
	parts, _ := p.CallParts(ctx, id, "wrong", nil)
	if len(parts) != 1 || parts[0].Image != nil {
		t.Errorf("an invalid result kept a part: %+v", parts)
	}
}
