package mcppool

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/telemetry"
	"github.com/guilds/guilds/internal/tools"
)

// MCP Apps (docs/adr/0620): a tool's listing may name a ui:// page in
// _meta.ui.resourceUri (older drafts: _meta["ui/resourceUri"]), and a
// result may embed or link one. The pool finds them and reads a page
// through the login's session; keeping it is the caller's (internal/remote).

// appCapability is what the platform tells servers at initialize: it hosts
// MCP Apps pages of that type, and it follows tasks (task.go). It is never
// changed: a stateless session trims its own copy (declare.go).
// Each value is encoded once: on the 2026-07-28 wire the capabilities ride
// in every request's _meta, and mcp-go encodes them for each one.
var appCapability = map[string]any{
	tools.AppExtension: encoded(map[string]any{"mimeTypes": []string{tools.AppMediaType}}),
	TasksExtension:     json.RawMessage(`{}`),
}

func encoded(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// uiResourceOf is the ui:// page a tool's _meta names, or "".
func uiResourceOf(meta *mcp.Meta) string {
	if meta == nil {
		return ""
	}
	if ui, ok := meta.AdditionalFields["ui"].(map[string]any); ok {
		if uri, ok := ui["resourceUri"].(string); ok && tools.IsAppURI(uri) {
			return uri
		}
	}
	if uri, ok := meta.AdditionalFields["ui/resourceUri"].(string); ok && tools.IsAppURI(uri) {
		return uri
	}
	return ""
}

// appPart is a result's ui:// resource as an app: an embedded page (never
// given to the model as text) or a link to one, read later. ok is false for
// any other content.
func appPart(c mcp.Content) (tools.Part, bool) {
	switch v := c.(type) {
	case *mcp.EmbeddedResource:
		return appPart(*v)
	case mcp.EmbeddedResource:
		if c, ok := pageOf(v.Resource); ok && tools.IsAppURI(c.uri) {
			a := &tools.App{URI: c.uri}
			setPage(a, c)
			return tools.Part{App: a}, true
		}
	case *mcp.ResourceLink:
		return appPart(*v)
	case mcp.ResourceLink:
		if tools.IsAppURI(v.URI) {
			return tools.Part{App: &tools.App{URI: v.URI, MediaType: v.MIMEType}}, true
		}
	}
	return tools.Part{}, false
}

// pageContent is one resource content as (uri, type, text); a blob's text is
// its base64, marked by blob.
type pageContent struct {
	uri, mediaType, text string
	blob                 bool
}

func pageOf(r mcp.ResourceContents) (pageContent, bool) {
	switch v := r.(type) {
	case *mcp.TextResourceContents:
		return pageOf(*v)
	case mcp.TextResourceContents:
		return pageContent{uri: v.URI, mediaType: v.MIMEType, text: v.Text}, true
	case *mcp.BlobResourceContents:
		return pageOf(*v)
	case mcp.BlobResourceContents:
		return pageContent{uri: v.URI, mediaType: v.MIMEType, text: v.Blob, blob: true}, true
	}
	return pageContent{}, false
}

// setPage gives a its page; a base64 one is sized before it is decoded, so an
// oversized blob is never decoded.
func setPage(a *tools.App, c pageContent) {
	mediaType := c.mediaType
	if !c.blob {
		a.SetPage(mediaType, c.text)
		return
	}
	if n := decodedLen(c.text); n > tools.MaxAppBytes {
		a.MediaType, a.Size, a.Read = mediaType, n, true
		a.Drop(tools.CheckAppPage(mediaType, n))
		return
	}
	b, err := base64.StdEncoding.DecodeString(c.text)
	if err != nil {
		a.MediaType, a.Read = mediaType, true
		a.Drop("its data is not base64")
		return
	}
	a.SetPage(mediaType, string(b))
}

// ErrNoPage is a resources/read answer without the page asked for.
var ErrNoPage = errors.New("the server's answer holds no page")

// ReadApp reads an app's page (resources/read) on the connection's session,
// with the call's timeout, and checks it (tools.App.SetPage). The page is
// redacted of every credential value the request injected; a failure to
// read is an error, a page that fails a check comes back dropped.
func (p *Pool) ReadApp(ctx context.Context, connectionID, uri string) (tools.App, error) {
	ctx, used := connectors.WithUsed(ctx)
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	ctx, span := telemetry.StartMCPRequest(ctx, "resources/read", uri)
	var res *mcp.ReadResourceResult
	err := p.do(ctx, connectionID, "resources/read", p.o.CallTimeout, func(ctx context.Context, s *session) error {
		traced(span, s)
		req.Params.Meta = withTrace(ctx, nil)
		if s.info.Transport == "stdio" {
			meta, err := p.stdioMeta(ctx, s)
			if err != nil {
				return err
			}
			req.Params.Meta = withTrace(ctx, meta)
		}
		r, err := s.c.ReadResource(ctx, req)
		res = r
		return err
	})
	span.End(errorType(err))
	a := tools.App{URI: uri}
	if err != nil {
		_, err = used.Redact(nil, err)
		return a, err
	}
	var page *pageContent
	for _, c := range res.Contents {
		if pc, ok := pageOf(c); ok && (pc.uri == uri || page == nil) {
			page = &pc
		}
	}
	if page == nil {
		return a, fmt.Errorf("resources/read %s: %w", uri, ErrNoPage)
	}
	setPage(&a, *page)
	out, _ := used.Redact([]tools.Part{{App: &a}}, nil)
	return *out[0].App, nil
}
