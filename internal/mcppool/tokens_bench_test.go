package mcppool_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg" // Playwright's screenshots may be JPEG
	_ "image/png"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

// BenchmarkPublishedResultTokens estimates the tokens a model receives for
// one tool result before ADR 0617 and now (ADR 0621): server-everything's
// tiny image, a Playwright screenshot and a Playwright snapshot of a fixture
// page (internal/browserops/testdata/catalog.html). Text is counted at 4
// bytes a token; an image sent as an image at OpenAI's published estimate
// for detail "high" (85 + 170 per 512-pixel tile after scaling), beside the
// line naming it. "Before" is the result as the old resultText made it,
// every non-text part marshalled as JSON into the text; it is measured on a
// bare mcp-go client's answer from the same server. The timed loop is the
// pool's call.
func BenchmarkPublishedResultTokens(b *testing.B) {
	s := needPublished(b)
	db := testdb.New(b)
	page, err := os.ReadFile("../browserops/testdata/catalog.html")
	if err != nil {
		b.Fatal(err)
	}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write(page)
	}))
	b.Cleanup(site.Close)
	ev, pw := s.everythingHTTP(b), s.playwright(b)
	navigate := fmt.Sprintf(`{"url":%q}`, site.URL)
	for _, c := range []struct{ name, url, tool, before string }{
		{"tiny-image", ev, "get-tiny-image", ""},
		{"screenshot", pw, "browser_take_screenshot", navigate},
		{"snapshot", pw, "browser_snapshot", navigate},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			raw := bareCall(b, c.url, c.before, c.tool)
			before := len(oldResultText(raw)) / 4

			id := publishedConnection(b, db, "tokens", "http", c.url, map[string]any{})
			p := mcppool.New(mcppool.Options{DB: db, Credentials: noLogins()})
			b.Cleanup(p.Close)
			if c.before != "" {
				if _, err := p.Call(ctx, id, "browser_navigate", json.RawMessage(c.before)); err != nil {
					b.Fatal(err)
				}
			}
			var after int
			b.ReportAllocs()
			for b.Loop() {
				parts, err := p.CallParts(ctx, id, c.tool, json.RawMessage(`{}`))
				if err != nil {
					b.Fatal(err)
				}
				after = modelTokens(b, parts)
			}
			b.ReportMetric(float64(before), "tokens-before")
			b.ReportMetric(float64(after), "tokens-after")
		})
	}
}

// bareCall is a tool's result as a bare mcp-go client gets it, after a
// browser_navigate when navigate is set.
func bareCall(b *testing.B, url, navigate, tool string) *mcp.CallToolResult {
	b.Helper()
	ctx := context.Background()
	c := bareClient(b, url)
	call := func(name, args string) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, json.RawMessage(args)
		r, err := c.CallTool(ctx, req)
		if err != nil || r.IsError {
			b.Fatalf("%s: %v %+v", name, err, r)
		}
		return r
	}
	if navigate != "" {
		call("browser_navigate", navigate)
	}
	return call(tool, `{}`)
}

// oldResultText is the pool's result text before ADR 0617 (commit bbfb938
// removed it): text parts as they are, any other part as its JSON.
func oldResultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for i, c := range r.Content {
		if i > 0 {
			b.WriteByte('\n')
		}
		if t, ok := c.(mcp.TextContent); ok {
			b.WriteString(t.Text)
			continue
		}
		j, _ := json.Marshal(c)
		b.Write(j)
	}
	if len(r.Content) == 0 && r.StructuredContent != nil {
		j, _ := json.Marshal(r.StructuredContent)
		b.Write(j)
	}
	return b.String()
}

// modelTokens estimates what the model receives for a result's parts now:
// the text with each image described as kept, and each kept image with the
// line naming it (activities/run imageParts).
func modelTokens(b *testing.B, parts []tools.Part) int {
	text := tools.JoinParts(parts, func(i int, _ tools.Image) string { return fmt.Sprintf("run image 3.%d", i) })
	n := len(text) / 4
	for _, p := range parts {
		if p.Image == nil || p.Image.Data == nil {
			continue
		}
		cfg, _, err := image.DecodeConfig(bytes.NewReader(p.Image.Data))
		if err != nil {
			b.Fatalf("a kept image does not decode: %v", err)
		}
		n += len("run image 3.1, returned by tool call call_0123456789abcdefghij:")/4 + imageTokens(cfg.Width, cfg.Height)
	}
	return n
}

// imageTokens is OpenAI's published estimate for an image of detail "high":
// scaled to fit 2048×2048, then its shorter side to at most 768, 170 tokens
// per 512-pixel tile plus 85.
func imageTokens(w, h int) int {
	fw, fh := float64(w), float64(h)
	if s := 2048 / math.Max(fw, fh); s < 1 {
		fw, fh = fw*s, fh*s
	}
	if s := 768 / math.Min(fw, fh); s < 1 {
		fw, fh = fw*s, fh*s
	}
	return 85 + 170*int(math.Ceil(fw/512)*math.Ceil(fh/512))
}
