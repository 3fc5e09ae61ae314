package api

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// What a run's tools returned besides text (docs/adr/0617, 0620): the
// operator app lists it and loads each image and app page from its own route.

// appPagePolicy is the Content-Security-Policy of a kept MCP Apps page. The
// sandbox directive gives the page an opaque origin even when it is opened
// outside the app's frame: it reads no cookie and reaches nothing of the
// API's origin. Its own inline script and style run; it loads nothing, sends
// nothing (no fetch, no form, no navigation of the app), and only the app's
// own pages may frame it.
const appPagePolicy = "sandbox allow-scripts; default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; " +
	"img-src data:; connect-src 'none'; font-src 'none'; media-src 'none'; frame-src 'none'; base-uri 'none'; " +
	"form-action 'none'; frame-ancestors 'self'"

// runImagePolicy keeps a kept image an image: opened on its own it runs
// nothing, even were its bytes markup.
const runImagePolicy = "sandbox; default-src 'none'; img-src 'self'; style-src 'unsafe-inline'"

func (s *Server) runMediaRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/runs/:id/media", Tag: "runs",
			Summary: "List the images and MCP Apps pages a run's tool calls returned and the run kept, by message seq",
			Reply:   []runs.Media{}, Handle: listRunMedia},
		{Method: "GET", Path: "/api/runs/:id/images/:seq/:idx", Tag: "runs",
			Summary: "Get a kept image of a run's tool result: its bytes, with its media type", Raw: s.runImage},
		{Method: "GET", Path: "/api/runs/:id/apps/:seq/:idx", Tag: "runs",
			Summary: "Get a kept MCP Apps page of a run's tool result, as a sandboxed page for the operator app's frame", Raw: s.runApp},
	}
}

func listRunMedia(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	r, err := runs.Get(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	out, err := runs.MediaOf(ctx, db, r.ID)
	return http.StatusOK, out, err
}

// mediaPlace reads a media route's run (one the caller may see) and its
// (seq, idx).
func (s *Server) mediaPlace(c *gin.Context) (ctx context.Context, cancel context.CancelFunc, runID string, seq, idx int, err error) {
	ctx, cancel = context.WithTimeout(c.Request.Context(), DefaultTimeout)
	// The run first: a run the caller may not see is absent, whatever the
	// rest of the path says.
	p := c.MustGet(principalKey).(access.Principal)
	r, err := runs.Get(ctx, s.db(), p, c.Param("id"))
	if err != nil {
		return ctx, cancel, "", 0, 0, err
	}
	seq, e1 := strconv.Atoi(c.Param("seq"))
	idx, e2 := strconv.Atoi(c.Param("idx"))
	var probs validation.Problems
	probs.Check(e1 == nil && seq >= 1, "seq", "must be a message seq (a whole number from 1)")
	probs.Check(e2 == nil && idx >= 1, "idx", "must be the item's place in its result (a whole number from 1)")
	return ctx, cancel, r.ID, seq, idx, probs.Err()
}

// mediaHeaders are the headers every kept item is served with.
func mediaHeaders(c *gin.Context, policy string) {
	h := c.Writer.Header()
	h.Set("Content-Security-Policy", policy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	// Kept items never change, but they are the run's: no shared cache.
	h.Set("Cache-Control", "private, max-age="+strconv.Itoa(int(time.Hour/time.Second)))
}

func (s *Server) runImage(c *gin.Context) {
	ctx, cancel, runID, seq, idx, err := s.mediaPlace(c)
	defer cancel()
	if err != nil {
		s.fail(c, err)
		return
	}
	im, err := runs.LoadImage(ctx, s.db(), runID, seq, idx)
	if err != nil {
		s.fail(c, err)
		return
	}
	// The column only holds image/ types; a type with parameters or odd
	// characters is served as bytes rather than echoed.
	mt := im.MediaType
	if !strings.HasPrefix(mt, "image/") || strings.ContainsAny(mt, ";,\r\n ") {
		mt = "application/octet-stream"
	}
	mediaHeaders(c, runImagePolicy)
	c.Data(http.StatusOK, mt, im.Data)
}

func (s *Server) runApp(c *gin.Context) {
	ctx, cancel, runID, seq, idx, err := s.mediaPlace(c)
	defer cancel()
	if err != nil {
		s.fail(c, err)
		return
	}
	a, err := runs.LoadApp(ctx, s.db(), runID, seq, idx)
	if err != nil {
		s.fail(c, err)
		return
	}
	mediaHeaders(c, appPagePolicy)
	c.Data(http.StatusOK, "text/html; charset=utf-8", []byte(a.HTML))
}
