package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/gin-gonic/gin"
)

// LandingPath is the operator app's page that says how an OAuth login ended.
const LandingPath = "/connected"

// GitHubChoosePage is the operator app's page where the user picks among
// the GitHub installations their login reaches (it reads GitHubPickerPath).
const GitHubChoosePage = LandingPath + "/github"

// oauthLanding sends a browser that lands on the OAuth callback on to the
// app's landing page instead of showing it the API's JSON. The page learns
// only the outcome: the connection id and account hint, or the error code;
// never the code, state or a token. Non-browser callers (curl, the CLI, the
// POST callback) get the JSON as before.
func oauthLanding() gin.HandlerFunc {
	return func(c *gin.Context) {
		if c.Request.Method != http.MethodGet || c.Request.URL.Path != CallbackPath || !browserNavigation(c.Request) {
			c.Next()
			return
		}
		rec := &recordingWriter{ResponseWriter: c.Writer, status: http.StatusOK}
		c.Writer = rec
		c.Next()
		c.Writer = rec.ResponseWriter
		h := c.Writer.Header()
		h.Del("Content-Type")
		h.Del("Content-Length")
		h.Set("Cache-Control", "no-store")
		h.Set("Referrer-Policy", "no-referrer")
		if rec.status >= 300 && rec.status < 400 && h.Get("Location") != "" {
			// The login goes on elsewhere (GitHub's setup redirect on to
			// user authorization): the browser follows it.
			c.Writer.WriteHeader(rec.status)
			return
		}
		h.Set("Location", landingLocation(rec))
		c.Writer.WriteHeader(http.StatusSeeOther)
	}
}

// landingLocation is the app page that tells the callback's outcome.
func landingLocation(rec *recordingWriter) string {
	q := url.Values{}
	var reply struct {
		ConnectionID string `json:"connection_id"`
		Status       string `json:"status"`
		AccountHint  string `json:"account_hint"`
		Error        *Error `json:"error"`
	}
	_ = json.Unmarshal(rec.body.Bytes(), &reply)
	switch {
	case rec.status < 300 && reply.Error == nil && reply.Status == githubChooseStatus:
		return GitHubChoosePage
	case rec.status < 300 && reply.Error == nil:
		q.Set("result", "connected")
		q.Set("connection", reply.ConnectionID)
		if reply.Status != "" && reply.Status != "connected" {
			q.Set("result", reply.Status)
		}
		if reply.AccountHint != "" {
			q.Set("account", reply.AccountHint)
		}
	case reply.Error != nil:
		q.Set("result", "refused")
		q.Set("reason", reply.Error.Code)
	default:
		q.Set("result", "refused")
		q.Set("reason", "internal")
	}
	return LandingPath + "?" + q.Encode()
}

// browserNavigation: a top-level page load, as a browser marks it.
func browserNavigation(r *http.Request) bool {
	if mode := r.Header.Get("Sec-Fetch-Mode"); mode != "" {
		return mode == "navigate"
	}
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// recordingWriter holds a handler's answer back so it can be turned into a redirect.
type recordingWriter struct {
	gin.ResponseWriter
	status int
	body   bytes.Buffer
}

func (w *recordingWriter) WriteHeader(code int)              { w.status = code }
func (w *recordingWriter) WriteHeaderNow()                   {}
func (w *recordingWriter) Write(b []byte) (int, error)       { return w.body.Write(b) }
func (w *recordingWriter) WriteString(s string) (int, error) { return w.body.WriteString(s) }
func (w *recordingWriter) Status() int                       { return w.status }
func (w *recordingWriter) Written() bool                     { return w.body.Len() > 0 }
func (w *recordingWriter) Size() int                         { return w.body.Len() }
