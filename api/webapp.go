package api

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/webapp"
)

// contentSecurityPolicy lets the app load only its own scripts, styles and
// API: no inline script, no other origin, no framing of the app. It frames
// only its own origin: the MCP Apps pages a run kept, which their route
// serves sandboxed (an opaque origin; docs/adr/0620).
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; font-src 'self'; frame-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// serveApp answers every path the route table does not hold: the API's own
// paths get the JSON not-found error; any other GET is a file of the operator
// app, or its start page (the app routes in the browser).
func (s *Server) serveApp(c *gin.Context) {
	p := c.Request.URL.Path
	if p == "/api" || strings.HasPrefix(p, "/api/") || (c.Request.Method != http.MethodGet && c.Request.Method != http.MethodHead) {
		writeError(c, errNotFoundRoute)
		return
	}
	a, ok := webapp.Lookup(p)
	if !ok {
		a = webapp.Index()
	}
	h := c.Writer.Header()
	// Files keep their names across releases: the browser revalidates each
	// (a 304 by ETag) rather than running a stale script.
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("ETag", a.ETag)
	h.Set("Vary", "Accept-Encoding")
	if match := c.GetHeader("If-None-Match"); match != "" && match == a.ETag {
		c.Status(http.StatusNotModified)
		return
	}
	body := a.Body
	if a.Gzip != nil && strings.Contains(c.GetHeader("Accept-Encoding"), "gzip") {
		h.Set("Content-Encoding", "gzip")
		body = a.Gzip
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	c.Data(http.StatusOK, a.Type, body)
}
