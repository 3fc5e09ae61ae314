package mcppool_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

// pngBytes is a small stand-in image; only its bytes matter here.
var pngBytes = append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0x42}, 300)...)

const mediaToken = "tok-media-0123456789"

// mediaServer answers with the non-text parts MCP defines.
func mediaServer(t *testing.T) string {
	s := server.NewMCPServer("media", "1.0.0", server.WithToolCapabilities(false))
	add := func(name string, content ...mcp.Content) {
		s.AddTool(mcp.NewTool(name), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: content}, nil
		})
	}
	enc := base64.StdEncoding.EncodeToString
	add("shot", mcp.NewTextContent("the page:"), mcp.NewImageContent(enc(pngBytes), "image/png"))
	add("huge", mcp.NewImageContent(enc(bytes.Repeat([]byte{7}, 20<<20)), "image/png"))
	add("leaky", mcp.NewImageContent(enc(append(append([]byte{}, pngBytes...), mediaToken...)), "image/png"))
	add("mixed",
		mcp.NewAudioContent(enc(bytes.Repeat([]byte{1}, 2048)), "audio/wav"),
		mcp.NewResourceLink("file:///srv/report.pdf", "report.pdf", "the monthly report", "application/pdf"),
		mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///srv/notes.txt", MIMEType: "text/plain", Text: "hello from a resource"}),
		mcp.NewEmbeddedResource(mcp.BlobResourceContents{URI: "file:///srv/blob.bin", MIMEType: "application/octet-stream", Blob: enc(bytes.Repeat([]byte{9}, 4096))}),
	)
	s.AddTool(mcp.NewTool("structured"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{StructuredContent: map[string]any{"count": 2, "items": []string{"a", "b"}}}, nil
	})
	return servePeer(t, s, mediaToken)
}

// No non-text part reaches the text as base64 or JSON: an image is kept
// aside as bytes, one over tools.MaxImageBytes or holding the login's token
// is described and dropped, audio and blobs are described, a link is listed
// by name and URI, an embedded text resource is given as text.
func TestCallPartsKeepsNonTextOutOfTheText(t *testing.T) {
	ctx := context.Background()
	db := testdb.New(t)
	id := addConnection(t, db, "media", mediaServer(t), "oauth", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{tokens: map[uuid.UUID][]string{uuid.MustParse(id): {mediaToken}}}})
	t.Cleanup(p.Close)
	call := func(tool string) []tools.Part {
		t.Helper()
		parts, err := p.CallParts(ctx, id, tool, json.RawMessage(`{}`))
		if err != nil {
			t.Fatalf("%s: %v", tool, err)
		}
		text := tools.JoinParts(parts, nil)
		for _, bad := range []string{`"data"`, `"blob"`, base64.StdEncoding.EncodeToString(pngBytes[:60]), "AQEBAQEB", "CQkJCQkJ", "BwcHBwcH", mediaToken} {
			if strings.Contains(text, bad) {
				t.Fatalf("%s: the text holds %q: %.300s", tool, bad, text)
			}
		}
		return parts
	}

	shot := call("shot")
	if len(shot) != 2 || shot[0].Text != "the page:" || shot[1].Image == nil || !bytes.Equal(shot[1].Image.Data, pngBytes) ||
		shot[1].Image.MediaType != "image/png" {
		t.Fatalf("shot = %+v", shot)
	}
	if got := tools.JoinParts(shot, func(int, tools.Image) string { return "image 1 of this call" }); got != "the page:\n[image: image/png, 308 B; kept as image 1 of this call]" {
		t.Fatalf("described as %q", got)
	}

	huge := call("huge")
	if len(huge) != 1 || huge[0].Image == nil || huge[0].Image.Data != nil || huge[0].Image.Size != 20<<20 {
		t.Fatalf("a 20 MiB image is kept: %+v", huge[0].Image)
	}
	if got := tools.JoinParts(huge, nil); got != "[image: image/png, 20.0 MiB; not kept: larger than the 5.0 MiB limit]" {
		t.Fatalf("huge described as %q", got)
	}

	leaky := call("leaky")
	if leaky[0].Image == nil || leaky[0].Image.Data != nil || !strings.Contains(tools.JoinParts(leaky, nil), "credential") {
		t.Fatalf("an image holding the token is kept: %+v", leaky[0].Image)
	}

	mixed := tools.JoinParts(call("mixed"), nil)
	for _, want := range []string{"[audio: audio/wav, 2.0 KiB; not kept]", "[resource link: report.pdf <file:///srv/report.pdf>, application/pdf: the monthly report]",
		"[resource file:///srv/notes.txt]\nhello from a resource", "[resource file:///srv/blob.bin: application/octet-stream, 4.0 KiB; binary, not shown]"} {
		if !strings.Contains(mixed, want) {
			t.Fatalf("mixed lacks %q:\n%s", want, mixed)
		}
	}

	if got := tools.JoinParts(call("structured"), nil); got != `{"count":2,"items":["a","b"]}` {
		t.Fatalf("structured = %q", got)
	}
	if out, err := p.Call(ctx, id, "shot", nil); err != nil || out != "the page:\n[image: image/png, 308 B; not kept]" {
		t.Fatalf("Call = %q, %v", out, err)
	}
}
