package connectors

import (
	"errors"
	"net/http"
	"strings"

	"github.com/guilds/guilds/internal/tools"
)

// ScrubbedError is an error whose text had a login's credential values
// removed: a service may echo the request (its headers, its key) in a failed
// answer, and a transport quotes that answer's body.
type ScrubbedError struct {
	msg string
	err error
}

func (e *ScrubbedError) Error() string { return e.msg }
func (e *ScrubbedError) Unwrap() error { return e.err }

// Scrub is err with every value of cred (four characters or more) cut out
// of its text; err itself when none is there.
func Scrub(err error, cred Credential) error {
	if err == nil {
		return nil
	}
	vals := []string{cred.AccessToken, cred.RefreshToken}
	for _, v := range cred.Extra {
		vals = append(vals, v)
	}
	msg := err.Error()
	changed := false
	for _, v := range vals {
		if len(v) >= 4 && strings.Contains(msg, v) {
			msg, changed = strings.ReplaceAll(msg, v, "[REDACTED]"), true
		}
	}
	if !changed {
		return err
	}
	return &ScrubbedError{msg: msg, err: err}
}

// Redact removes from a call's answer the credential values the call used
// (u), a token refreshed on the way included, from its text and its MCP Apps
// pages; an image holding one of them is withheld, since pixels cannot be
// redacted.
func (u *Used) Redact(out []tools.Part, err error) ([]tools.Part, error) {
	vals := u.Values()
	if len(vals) == 0 {
		return out, err
	}
	red := redactors.of(vals)
	for i := range out {
		if out[i].Image != nil {
			out[i].Image.Withhold(red, "")
			continue
		}
		if a := out[i].App; a != nil {
			a.HTML = red.Redact(a.HTML)
			continue
		}
		out[i].Text = red.Redact(out[i].Text)
	}
	if err != nil {
		if msg := red.Redact(err.Error()); msg != err.Error() {
			err = &ScrubbedError{msg: msg, err: err}
		}
	}
	return out, err
}

// credentialHeaders are dropped from any request that a redirect sends to
// another host; so is every header carrying a value the call's credential
// injected (a catalog row's X-API-KEY, a configured header).
var credentialHeaders = []string{"Authorization", "Proxy-Authorization", "Cookie"}

// GuardRedirects returns a copy of c whose redirects to another host carry
// no credential. Go's client drops Authorization across domains but keeps
// custom headers, and a subdomain still gets Authorization. The values
// dropped are those the request's context recorded (WithUsed).
func GuardRedirects(c *http.Client) *http.Client {
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
	vals := UsedFrom(req.Context()).Values()
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
