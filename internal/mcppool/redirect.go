package mcppool

import (
	"errors"
	"net/http"
	"strings"

	"github.com/guilds/guilds/internal/connectors"
)

// credentialHeaders are dropped from any request that a redirect sends to
// another host; so is every header carrying a value the call's credential
// injected (a catalog row's X-API-KEY, a configured header).
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie"}

// guardRedirects returns a copy of c whose redirects to another host carry
// no credential. Go's client drops Authorization across domains but keeps
// custom headers, and a subdomain still gets Authorization.
func guardRedirects(c *http.Client) *http.Client {
	out := *c
	next := c.CheckRedirect
	out.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > 0 && !strings.EqualFold(req.URL.Host, via[0].URL.Host) {
			dropCredentials(req)
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &out
}

func dropCredentials(req *http.Request) {
	for _, h := range credentialHeaders {
		req.Header.Del(h)
	}
	vals := connectors.UsedFrom(req.Context()).Values()
	for name, vs := range req.Header {
		for _, v := range vs {
			if carries(v, vals) {
				req.Header.Del(name)
				break
			}
		}
	}
}

func carries(header string, vals []string) bool {
	for _, v := range vals {
		if len(v) >= 4 && strings.Contains(header, v) {
			return true
		}
	}
	return false
}
