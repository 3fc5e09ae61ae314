package api

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// The operator app signs in by exchanging an API token for a session
// cookie (HttpOnly, SameSite=Strict, Secure outside loopback). Every
// mutating request made with that cookie repeats the session's CSRF token in
// X-CSRF-Token; the app reads it from the guilds_csrf cookie (readable by
// the page, useless to another site). Bearer tokens work as before.
const (
	sessionCookie = "guilds_session"
	csrfCookie    = "guilds_csrf"
	csrfHeader    = "X-CSRF-Token"
)

var errCSRF = &Error{Status: http.StatusForbidden, Code: "csrf_required",
	Message: "a request made with the session cookie must repeat its CSRF token in the X-CSRF-Token header"}

type sessionInput struct {
	Token string `json:"token"`
}

type sessionReply struct {
	UserID   string   `json:"user_id"`
	Name     string   `json:"name"`
	Admin    bool     `json:"admin"`
	AuthMode string   `json:"auth_mode"`
	Orgs     []string `json:"orgs"`
	// TemporalUI prefixes a run's workflow id (run-<id>) to link to it.
	TemporalUI string     `json:"temporal_ui,omitempty"`
	CSRFToken  string     `json:"csrf_token,omitempty"`
	ExpiresAt  *time.Time `json:"expires_at,omitempty"`
}

func (s *Server) sessionRoutes() []route {
	return []route{
		{Method: "POST", Path: "/api/session", Tag: "session", Public: true, Status: http.StatusCreated,
			Summary: "Sign the operator app in: exchange an API token for a session cookie and a CSRF token (token mode)",
			Body:    sessionInput{}, Reply: sessionReply{}, Handle: s.openSession},
		{Method: "GET", Path: "/api/session", Tag: "session",
			Summary: "Who the caller is: user, admin, the box's auth mode and the organisations it operates",
			Reply:   sessionReply{}, Handle: s.currentSession},
		{Method: "DELETE", Path: "/api/session", Tag: "session", Status: http.StatusNoContent,
			Summary: "Sign the operator app out: the session cookie's session ends", Handle: s.closeSession},
	}
}

func (s *Server) openSession(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	if s.AuthMode == "local" {
		return 0, nil, &Error{Status: http.StatusConflict, Code: "local_mode",
			Message: "this box runs in local auth mode: the app opens without signing in, on loopback only"}
	}
	if !sameOrigin(c) {
		return 0, nil, &Error{Status: http.StatusForbidden, Code: "cross_site_refused", Message: "sign in from this box's own page"}
	}
	var in sessionInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	if strings.TrimSpace(in.Token) == "" {
		return 0, nil, &validation.Error{Problems: []validation.Problem{{Field: "token", Message: "paste an API token (gld_…)"}}}
	}
	sess, err := access.OpenSession(ctx, db, in.Token)
	if err != nil {
		return 0, nil, err
	}
	p, err := access.Load(ctx, db, sess.UserID)
	if err != nil {
		return 0, nil, err
	}
	reply, err := s.describe(ctx, db, p)
	if err != nil {
		return 0, nil, err
	}
	reply.CSRFToken, reply.ExpiresAt = sess.CSRF, &sess.ExpiresAt
	secure := s.cookiesSecure(c)
	maxAge := int(time.Until(sess.ExpiresAt).Seconds())
	//nolint:gosec // G124: Secure except on a plain-http loopback box (cookiesSecure); HttpOnly and SameSite are set
	http.SetCookie(c.Writer, &http.Cookie{Name: sessionCookie, Value: sess.ID, Path: "/", MaxAge: maxAge,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure})
	//nolint:gosec // G124: the page reads the CSRF token (double submit); it grants nothing without the HttpOnly session cookie
	http.SetCookie(c.Writer, &http.Cookie{Name: csrfCookie, Value: sess.CSRF, Path: "/", MaxAge: maxAge,
		SameSite: http.SameSiteStrictMode, Secure: secure})
	return http.StatusCreated, reply, nil
}

func (s *Server) currentSession(ctx context.Context, _ *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	reply, err := s.describe(ctx, db, p)
	return http.StatusOK, reply, err
}

func (s *Server) closeSession(ctx context.Context, c *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	if id, err := c.Cookie(sessionCookie); err == nil && id != "" {
		if err := access.CloseSession(ctx, db, id); err != nil {
			return 0, nil, err
		}
	}
	secure := s.cookiesSecure(c)
	//nolint:gosec // G124: Secure except on a plain-http loopback box (cookiesSecure); HttpOnly and SameSite are set
	http.SetCookie(c.Writer, &http.Cookie{Name: sessionCookie, Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: secure})
	//nolint:gosec // G124: clears the page-readable CSRF cookie
	http.SetCookie(c.Writer, &http.Cookie{Name: csrfCookie, Path: "/", MaxAge: -1,
		SameSite: http.SameSiteStrictMode, Secure: secure})
	return http.StatusNoContent, nil, nil
}

func (s *Server) describe(ctx context.Context, db store.DB, p access.Principal) (sessionReply, error) {
	name, err := access.UserName(ctx, db, p.UserID)
	if err != nil {
		return sessionReply{}, err
	}
	r := sessionReply{UserID: p.UserID, Name: name, Admin: p.Admin, AuthMode: s.AuthMode, Orgs: []string{}, TemporalUI: s.TemporalUI}
	for org := range p.Orgs {
		r.Orgs = append(r.Orgs, org)
	}
	return r, nil
}

// cookiesSecure: session cookies are Secure except on a plain-http loopback box.
func (s *Server) cookiesSecure(c *gin.Context) bool {
	return s.servedOverHTTPS(c) || !loopbackHost(c.Request.Host)
}

// sameOrigin refuses a sign-in posted by another site's page (login CSRF).
func sameOrigin(c *gin.Context) bool {
	switch c.GetHeader("Sec-Fetch-Site") {
	case "", "same-origin", "none":
	default:
		return false
	}
	origin := c.GetHeader("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && strings.EqualFold(u.Host, c.Request.Host)
}

// sessionPrincipal authenticates a request by its session cookie; a
// mutating one must carry the session's CSRF token.
func (s *Server) sessionPrincipal(c *gin.Context, id string) (access.Principal, error) {
	a, err := access.AuthenticateSession(c.Request.Context(), s.db(), id)
	if err != nil {
		return access.Principal{}, err
	}
	switch c.Request.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
	default:
		if !a.CSRFMatches(c.GetHeader(csrfHeader)) {
			return access.Principal{}, errCSRF
		}
	}
	return a.Principal, nil
}
