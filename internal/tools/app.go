package tools

import (
	"fmt"
	"mime"
	"strings"
)

// MCP Apps (the io.modelcontextprotocol/ui extension, docs/adr/0620): a tool
// may show its results in an HTML page, a ui:// resource the host reads and
// renders in a sandboxed frame. The model never reads that page.
const (
	// AppExtension is the extension's name in capabilities.
	AppExtension = "io.modelcontextprotocol/ui"
	// AppMediaType is the media type of an app's page.
	AppMediaType = "text/html;profile=mcp-app"
	// MaxAppBytes is the largest app page a run keeps.
	MaxAppBytes = 256 << 10
)

// App is an MCP App a tool's call declared (its listing's
// _meta.ui.resourceUri) or returned (an embedded or linked ui:// resource).
// HTML is empty until the page is read, and when it is not kept: Dropped
// then says why, in words the model reads.
type App struct {
	URI       string
	MediaType string
	Size      int // bytes of the page; 0 while unread
	HTML      string
	Read      bool   // HTML holds the page as the server sent it
	Dropped   string // why the page is not kept
	Kept      string // where it was kept ("run app 5.1"); "" when not
}

// IsAppURI reports whether uri names an app page (ui://…).
func IsAppURI(uri string) bool { return strings.HasPrefix(uri, "ui://") }

// SetPage records the page a server sent for the app and checks it: an HTML
// media type and at most MaxAppBytes. A page that fails a check is dropped
// with the reason.
func (a *App) SetPage(mediaType, html string) {
	a.MediaType, a.Size, a.Read = mediaType, len(html), true
	if why := CheckAppPage(mediaType, len(html)); why != "" {
		a.Dropped = why
		return
	}
	a.HTML = html
}

// CheckAppPage says why a page of that type and size cannot be kept, or "".
func CheckAppPage(mediaType string, size int) string {
	base, _, err := mime.ParseMediaType(mediaType)
	switch {
	case mediaType == "":
		return "it has no media type (an app page is " + AppMediaType + ")"
	case err != nil || base != "text/html":
		return fmt.Sprintf("its media type %q is not text/html", mediaType)
	case size > MaxAppBytes:
		return fmt.Sprintf("larger than the %s limit", HumanBytes(MaxAppBytes))
	case size == 0:
		return "the page is empty"
	}
	return ""
}

// Drop withholds the page, saying why.
func (a *App) Drop(why string) { a.HTML, a.Dropped = "", why }

// Describe is the one line the model reads in place of an app.
func (a App) Describe() string {
	s := "[app " + a.URI
	if a.Read {
		kind := a.MediaType
		if kind == "" {
			kind = "no media type"
		}
		s += fmt.Sprintf(": %s, %s", kind, HumanBytes(a.Size))
	}
	switch {
	case a.Kept != "":
		s += "; kept as " + a.Kept + ", shown to the operator in the run's transcript"
	case a.Dropped != "":
		s += "; not kept: " + a.Dropped
	default:
		s += "; not kept"
	}
	return s + "]"
}
