package mcppool

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// A resource link names a resource the model cannot open: it has no way to
// send resources/read. The pool reads small text ones on the session (and so
// with the login) that made the call, and gives their text with the link.
// See docs/adr/0621.
const (
	// maxLinkText caps a read link's text, as an embedded resource's.
	maxLinkText = maxResourceText
	// maxLinksRead bounds the links read for one result; later ones are
	// listed only.
	maxLinksRead = 4
	// maxLinkError caps the reason a read failed.
	maxLinkError = 300
)

// readLinks replaces each readable resource link of r (a text type, a
// declared size within maxLinkText or none, not a ui:// resource) by a text
// part: the link as Parts lists it, then the resource's text, cut. A failed
// read is described there; it never fails the call. Nothing is read when the
// server does not declare resources.
func readLinks(ctx context.Context, c *client.Client, meta *mcp.Meta, r *mcp.CallToolResult) {
	if r == nil || c.GetServerCapabilities().Resources == nil {
		return
	}
	n := 0
	for i, ct := range r.Content {
		l, ok := asLink(ct)
		if !ok || !readable(l) {
			continue
		}
		if n == maxLinksRead {
			return
		}
		n++
		req := mcp.ReadResourceRequest{}
		req.Params.URI = l.URI
		req.Params.Meta = meta
		res, err := c.ReadResource(ctx, req)
		r.Content[i] = mcp.TextContent{Type: mcp.ContentTypeText, Text: linkText(l, res, err)}
	}
}

func asLink(c mcp.Content) (mcp.ResourceLink, bool) {
	switch v := c.(type) {
	case mcp.ResourceLink:
		return v, true
	case *mcp.ResourceLink:
		return *v, true
	}
	return mcp.ResourceLink{}, false
}

// readable: a text type whose declared size, if any, is small enough. A
// link of unknown type is not read: it may be large and binary.
func readable(l mcp.ResourceLink) bool {
	if strings.HasPrefix(strings.ToLower(l.URI), "ui://") {
		return false
	}
	if l.Size != nil && (*l.Size < 0 || *l.Size > maxLinkText) {
		return false
	}
	return textType(l.MIMEType)
}

// textType reports whether a media type is text a model can read.
func textType(mediaType string) bool {
	mt, _, _ := strings.Cut(mediaType, ";")
	mt = strings.ToLower(strings.TrimSpace(mt))
	if strings.HasPrefix(mt, "text/") || strings.HasSuffix(mt, "+json") || strings.HasSuffix(mt, "+xml") {
		return true
	}
	switch mt {
	case "application/json", "application/xml", "application/yaml", "application/x-yaml", "application/toml",
		"application/javascript", "application/x-ndjson", "application/sql", "application/graphql":
		return true
	}
	return false
}

// linkText is the link's line followed by what reading it gave.
func linkText(l mcp.ResourceLink, res *mcp.ReadResourceResult, err error) string {
	head := link(l).Text
	if err != nil {
		return head + "\n[could not read it: " + cutUTF8(strings.Join(strings.Fields(err.Error()), " "), maxLinkError) + "]"
	}
	var b strings.Builder
	for i, c := range res.Contents {
		if i > 0 {
			b.WriteByte('\n')
		}
		switch v := c.(type) {
		case mcp.TextResourceContents:
			b.WriteString(v.Text)
		case *mcp.TextResourceContents:
			b.WriteString(v.Text)
		default:
			b.WriteString(blobText(c))
		}
	}
	text := b.String()
	if len(text) > maxLinkText {
		kept := cutUTF8(text, maxLinkText)
		return head + "\n" + kept + fmt.Sprintf("\n[… %d more bytes of this resource not shown]", len(text)-len(kept))
	}
	return head + "\n" + text
}

// blobText is a binary resource's text when its type is a text type and its
// bytes are UTF-8 (a server may send text base64-encoded), else its
// description, as an embedded one's.
func blobText(c mcp.ResourceContents) string {
	var blob, mediaType string
	switch v := c.(type) {
	case mcp.BlobResourceContents:
		blob, mediaType = v.Blob, v.MIMEType
	case *mcp.BlobResourceContents:
		blob, mediaType = v.Blob, v.MIMEType
	}
	if textType(mediaType) && decodedLen(blob) <= maxLinkText {
		if b, err := base64.StdEncoding.DecodeString(blob); err == nil && utf8.Valid(b) {
			return string(b)
		}
	}
	return embedded(c).Text
}
