package mcppool_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/tools"
)

// A ui:// resource in a result is an app, never text: an embedded page
// (text or base64) is kept as its HTML when it is HTML and small enough, a
// link is left to read; an oversized base64 page is sized without decoding
// and dropped; any other embedded resource stays text as before.
func TestPartsTurnUIResourcesIntoApps(t *testing.T) {
	enc := base64.StdEncoding.EncodeToString
	big := strings.Repeat("A", (tools.MaxAppBytes/3+10)*4) // decodes to just over the cap
	parts := mcppool.Parts(&mcp.CallToolResult{Content: []mcp.Content{
		mcp.NewTextContent("fallback"),
		mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "ui://s/a", MIMEType: tools.AppMediaType, Text: "<p>a</p>"}),
		mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "ui://s/b", MIMEType: "text/html", Blob: enc([]byte("<p>b</p>"))}),
		mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "ui://s/big", MIMEType: tools.AppMediaType, Blob: big}),
		mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "ui://s/js", MIMEType: "text/javascript", Text: "alert(1)"}),
		mcp.NewResourceLink("ui://s/c", "c", "", tools.AppMediaType),
		mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///notes.txt", MIMEType: "text/plain", Text: "notes"}),
	}})
	if len(parts) != 7 || parts[0].Text != "fallback" || parts[6].Text != "[resource file:///notes.txt]\nnotes" {
		t.Fatalf("parts = %+v", parts)
	}
	a, b, bigApp, js, c := parts[1].App, parts[2].App, parts[3].App, parts[4].App, parts[5].App
	if a == nil || a.HTML != "<p>a</p>" || !a.Read || b == nil || b.HTML != "<p>b</p>" || c == nil || c.Read || c.URI != "ui://s/c" {
		t.Fatalf("apps: %+v %+v %+v", a, b, c)
	}
	if bigApp == nil || bigApp.HTML != "" || bigApp.Size <= tools.MaxAppBytes || !strings.Contains(bigApp.Dropped, "256.0 KiB") {
		t.Fatalf("oversized page: %+v", bigApp)
	}
	if js == nil || js.HTML != "" || !strings.Contains(js.Dropped, "not text/html") {
		t.Fatalf("script page: %+v", js)
	}
	text := tools.JoinParts(parts, nil)
	for _, bad := range []string{"<p>", "alert(1)", big[:40]} {
		if strings.Contains(text, bad) {
			t.Fatalf("the text holds %q: %.300s", bad, text)
		}
	}
}
