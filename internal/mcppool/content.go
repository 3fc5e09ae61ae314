package mcppool

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/tools"
)

// maxResourceText caps the text of one embedded resource given to the model.
const maxResourceText = 32 << 10

// Parts turns a tools/call result into the pieces the model receives. No
// base64 or JSON of a non-text part reaches the text: an image is kept
// aside (its bytes decoded, or dropped with a reason when larger than
// tools.MaxImageBytes or not base64), audio and binary resources are
// described, a resource link is listed by name and URI, and an embedded
// text resource is given as text (capped). structuredContent reaches the
// model once, as compact JSON (structuredOnce).
func Parts(r *mcp.CallToolResult) []tools.Part {
	var out []tools.Part
	for _, c := range r.Content {
		out = append(out, part(c))
	}
	return structuredOnce(out, r)
}

func part(c mcp.Content) tools.Part {
	if a, ok := appPart(c); ok {
		return a
	}
	switch v := c.(type) {
	case *mcp.TextContent:
		return tools.Part{Text: v.Text}
	case mcp.TextContent:
		return tools.Part{Text: v.Text}
	case *mcp.ImageContent:
		return image(v.MIMEType, v.Data)
	case mcp.ImageContent:
		return image(v.MIMEType, v.Data)
	case *mcp.AudioContent:
		return tools.Part{Text: fmt.Sprintf("[audio: %s, %s; not kept]", orUnknown(v.MIMEType), tools.HumanBytes(decodedLen(v.Data)))}
	case mcp.AudioContent:
		return tools.Part{Text: fmt.Sprintf("[audio: %s, %s; not kept]", orUnknown(v.MIMEType), tools.HumanBytes(decodedLen(v.Data)))}
	case *mcp.ResourceLink:
		return link(*v)
	case mcp.ResourceLink:
		return link(v)
	case *mcp.EmbeddedResource:
		return embedded(v.Resource)
	case mcp.EmbeddedResource:
		return embedded(v.Resource)
	}
	return tools.Part{Text: "[a result part of a kind this platform does not show]"}
}

// image decodes an image part; a too large or undecodable one keeps only
// its description.
func image(mediaType, data string) tools.Part {
	im := &tools.Image{MediaType: mediaType, Size: decodedLen(data)}
	switch {
	case im.Size > tools.MaxImageBytes:
		im.Dropped = fmt.Sprintf("larger than the %s limit", tools.HumanBytes(tools.MaxImageBytes))
	case !strings.HasPrefix(mediaType, "image/"):
		im.Dropped = "its media type is not an image type"
	default:
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			im.Dropped = "its data is not base64"
		} else {
			im.Data, im.Size = b, len(b)
		}
	}
	return tools.Part{Image: im}
}

func link(l mcp.ResourceLink) tools.Part {
	s := "[resource link: " + l.Name + " <" + l.URI + ">"
	if l.MIMEType != "" {
		s += ", " + l.MIMEType
	}
	if l.Description != "" {
		s += ": " + l.Description
	}
	return tools.Part{Text: s + "]"}
}

func embedded(r mcp.ResourceContents) tools.Part {
	switch v := r.(type) {
	case mcp.TextResourceContents:
		return resourceText(v.URI, v.Text)
	case *mcp.TextResourceContents:
		return resourceText(v.URI, v.Text)
	case mcp.BlobResourceContents:
		return tools.Part{Text: fmt.Sprintf("[resource %s: %s, %s; binary, not shown]", v.URI, orUnknown(v.MIMEType), tools.HumanBytes(decodedLen(v.Blob)))}
	case *mcp.BlobResourceContents:
		return tools.Part{Text: fmt.Sprintf("[resource %s: %s, %s; binary, not shown]", v.URI, orUnknown(v.MIMEType), tools.HumanBytes(decodedLen(v.Blob)))}
	}
	return tools.Part{Text: "[an embedded resource of a kind this platform does not show]"}
}

func resourceText(uri, text string) tools.Part {
	head := "[resource " + uri + "]\n"
	if len(text) > maxResourceText {
		cut := maxResourceText
		for cut > 0 && text[cut]&0xC0 == 0x80 {
			cut--
		}
		return tools.Part{Text: head + text[:cut] + fmt.Sprintf("\n[… %d more bytes of this resource not shown]", len(text)-cut)}
	}
	return tools.Part{Text: head + text}
}

// decodedLen is the byte length base64 text decodes to, without decoding it.
func decodedLen(s string) int {
	n := len(s) / 4 * 3
	if strings.HasSuffix(s, "==") {
		n -= 2
	} else if strings.HasSuffix(s, "=") {
		n--
	}
	return max(n, 0)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}
