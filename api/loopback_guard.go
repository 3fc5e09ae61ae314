package api

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/gin-gonic/gin"
)

// Local auth mode and the tokenless codec trust whoever reaches the API on
// loopback. A web page the operator visits can reach loopback too: by a
// cross-site request, or by DNS rebinding (its own name resolving to
// 127.0.0.1, so the browser calls it same-origin). Such requests are
// refused here: the Host must name this machine and port, the browser must
// not say the request is cross-site, an Origin must be a loopback one (this
// very origin, unless loopbackSites), and a body must be JSON, which a page
// can only send cross-origin after a CORS preflight that is never granted.
func checkLoopbackRequest(c *gin.Context, loopbackSites bool) *Error {
	r := c.Request
	if !hostIsThisLoopback(r) {
		return &Error{Status: http.StatusMisdirectedRequest, Code: "host_refused",
			Message: "this API trusts loopback callers only when the Host header names this machine and port (localhost or a loopback IP)"}
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	case "same-site":
		if !loopbackSites {
			return crossSite()
		}
	default:
		return crossSite()
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		u, err := url.Parse(origin)
		ok := err == nil && (u.Scheme == "http" || u.Scheme == "https") && loopbackHost(u.Host)
		if ok && !loopbackSites {
			ok = strings.EqualFold(u.Host, r.Host)
		}
		if !ok {
			return crossSite()
		}
	}
	if hasBody(r) {
		mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err != nil || mt != "application/json" {
			return &Error{Status: http.StatusUnsupportedMediaType, Code: "json_required",
				Message: "send the body as JSON with Content-Type: application/json"}
		}
	}
	return nil
}

func crossSite() *Error {
	return &Error{Status: http.StatusForbidden, Code: "cross_site_refused",
		Message: "a request from another site is refused: this API trusts loopback callers without a token"}
}

func hasBody(r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Method == http.MethodOptions {
		return false
	}
	return r.ContentLength != 0 && r.Body != nil && r.Body != http.NoBody
}

// hostIsThisLoopback reports whether the Host header names a loopback host
// with the port the request arrived on.
func hostIsThisLoopback(r *http.Request) bool {
	if !loopbackHost(r.Host) {
		return false
	}
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return false
	}
	_, want, err := net.SplitHostPort(local.String())
	if err != nil {
		return false
	}
	_, got, err := net.SplitHostPort(r.Host)
	if err != nil {
		got = "80"
		if r.TLS != nil {
			got = "443"
		}
	}
	if n, err := strconv.Atoi(got); err != nil || strconv.Itoa(n) != want {
		return false
	}
	return true
}
