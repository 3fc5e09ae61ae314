package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/workflows/connect"
)

// An OAuth login completes only for whoever started it: the browser that
// got the cookie below when Connect answered, or (POST callback) the same
// user's API token. Anyone else holding the authorization link, or a
// victim lured to a callback URL, is refused before the login is touched.

// oauthCookiePath scopes the binding cookie to the callback.
const oauthCookiePath = "/api/mcp/oauth/"

func oauthCookieName(connectionID string) string { return "guilds_oauth_" + connectionID }

// bindOAuthStart records who starts a connection's OAuth login and returns
// the nonce for the starting browser's cookie. It is written before the
// authorization URL exists, so no callback can outrun it.
func (s *Server) bindOAuthStart(ctx context.Context, connectionID, userID string) (string, error) {
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", err
	}
	nonce := base64.RawURLEncoding.EncodeToString(raw)
	sum := sha256.Sum256([]byte(nonce))
	return nonce, connectors.RecordOAuthStart(ctx, s.db(), connectionID, userID, sum[:])
}

// setOAuthCookie hands the starting browser its nonce: HttpOnly, SameSite
// Lax (the provider's redirect back is a top-level GET, which Lax allows),
// Secure when the API is served over https, and gone with the login's deadline.
// An MCP login's callback leaves it in place: a repeat of the callback (a
// reload, a retry after a replica died) is recognised by it (repeatedCallback).
func (s *Server) setOAuthCookie(c *gin.Context, connectionID, nonce string) {
	maxAge := int(connect.DefaultDeadline.Seconds())
	if s.MCP.OAuthDeadline > 0 {
		maxAge = int(s.MCP.OAuthDeadline.Seconds())
	}
	//nolint:gosec // G124: Secure follows the scheme the API is served on (plain http only for local development); HttpOnly and SameSite are set
	http.SetCookie(c.Writer, &http.Cookie{Name: oauthCookieName(connectionID), Value: nonce, Path: oauthCookiePath,
		MaxAge: maxAge, HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.servedOverHTTPS(c)})
}

func (s *Server) clearOAuthCookie(c *gin.Context, connectionID string) {
	//nolint:gosec // G124: Secure follows the scheme the API is served on (plain http only for local development); HttpOnly and SameSite are set
	http.SetCookie(c.Writer, &http.Cookie{Name: oauthCookieName(connectionID), Path: oauthCookiePath, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: s.servedOverHTTPS(c)})
}

func (s *Server) servedOverHTTPS(c *gin.Context) bool {
	return c.Request.TLS != nil || strings.HasPrefix(strings.ToLower(s.PublicBaseURL), "https://")
}

// pendingLogin is what the callback knows of the login a state names.
type pendingLogin struct{ connectors.PendingOAuth }

var errUnknownState = &Error{Status: http.StatusBadRequest, Code: "invalid_state", Message: "unknown or expired login"}

// findPending loads the unexpired pending login of a state
// (connectors.FindPendingOAuth); an unknown state is invalid_state.
func findPending(ctx context.Context, db store.DB, state string) (pendingLogin, error) {
	pl, err := connectors.FindPendingOAuth(ctx, db, state)
	if errors.Is(err, store.ErrNotFound) {
		return pendingLogin{}, errUnknownState
	}
	return pendingLogin{pl}, err
}

// checkBrowser refuses a browser callback without the starting browser's cookie.
func (pl pendingLogin) checkBrowser(c *gin.Context) error {
	nonce, err := c.Cookie(oauthCookieName(pl.ConnectionID))
	if err == nil && pl.BrowserHash != nil {
		sum := sha256.Sum256([]byte(nonce))
		if subtle.ConstantTimeCompare(sum[:], pl.BrowserHash) == 1 {
			return nil
		}
	}
	return &Error{Status: http.StatusForbidden, Code: "oauth_other_browser",
		Message: "this login was started in another browser: finish it in the browser that clicked Connect, or connect again from this one; the login is unchanged"}
}

// checkUser refuses an API callback from anyone but the user who started the login.
func (pl pendingLogin) checkUser(p access.Principal) error {
	if pl.StartedBy != "" && pl.StartedBy == p.UserID {
		return nil
	}
	return &Error{Status: http.StatusForbidden, Code: "oauth_other_user",
		Message: "this login was started by another user: only they can finish it; the login is unchanged"}
}

// checkIssuer applies RFC 9207: an iss the callback carries must name the
// authorization server the login was started with, when one was recorded,
// and a callback without iss is refused where that server promised to send
// one (authorization_response_iss_parameter_supported).
// The comparison is of plain strings (RFC 9207 section 2.4): a form
// normalised in any way, even a trailing slash, names another issuer.
func (pl pendingLogin) checkIssuer(iss string) error {
	if iss == "" && pl.IssRequired {
		return &Error{Status: http.StatusBadRequest, Code: "oauth_issuer_missing",
			Message: "the callback carries no iss, which this authorization server always sends: the response did not come from it; the login is unchanged"}
	}
	if iss == "" || pl.Issuer == "" || iss == pl.Issuer {
		return nil
	}
	return &Error{Status: http.StatusBadRequest, Code: "oauth_issuer_mismatch",
		Message: "the callback names another authorization server (iss) than the one this login was started with; the login is unchanged"}
}
