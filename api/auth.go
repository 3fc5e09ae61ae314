package api

import (
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
)

// authenticate resolves the caller: the local user in local mode, else the
// Bearer token's owner, else the operator app's session cookie (api/session.go).
func (s *Server) authenticate(c *gin.Context) (access.Principal, error) {
	ctx := c.Request.Context()
	if s.AuthMode == "local" {
		return access.Load(ctx, s.db(), s.LocalUserID)
	}
	h := c.GetHeader("Authorization")
	token, ok := strings.CutPrefix(h, "Bearer ")
	if h == "" {
		if id, err := c.Cookie(sessionCookie); err == nil && id != "" {
			return s.sessionPrincipal(c, id)
		}
	}
	if !ok || token == "" {
		return access.Principal{}, access.ErrUnauthenticated
	}
	return access.Authenticate(ctx, s.db(), strings.TrimSpace(token))
}
