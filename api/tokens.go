package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
)

// API tokens and users: every operator lists, mints and revokes their own
// tokens; an instance admin does it for anyone and disables users.
func (s *Server) tokenRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/tokens", Tag: "access",
			Summary: "Your API tokens (an instance admin sees every user's, or one user's with ?user_id=); never their values",
			Reply:   []access.Token{}, Handle: listTokens},
		{Method: "POST", Path: "/api/tokens", Tag: "access",
			Summary: "Mint an API token, optionally expiring (expires_in: 30m, 12h, 30d); an instance admin may mint one for another user. The value is shown once",
			Body:    tokenInput{}, Reply: tokenMinted{}, Status: http.StatusCreated, Handle: mintToken},
		{Method: "DELETE", Path: "/api/tokens/:id", Tag: "access",
			Summary: "Revoke an API token for good (your own; an instance admin revokes any)",
			Reply:   access.Token{}, Handle: revokeToken},
		{Method: "POST", Path: "/api/users/:id/disable", Tag: "access", Admin: true,
			Summary: "Disable a user: every token of theirs is refused (401 user_disabled) until they are enabled",
			Status:  http.StatusNoContent, Handle: setUserDisabled(true)},
		{Method: "POST", Path: "/api/users/:id/enable", Tag: "access", Admin: true,
			Summary: "Enable a disabled user again", Status: http.StatusNoContent, Handle: setUserDisabled(false)},
	}
}

type tokenInput struct {
	Name      string `json:"name"`
	ExpiresIn string `json:"expires_in,omitempty"`
	UserID    string `json:"user_id,omitempty"`
}

type tokenMinted struct {
	Token access.Token `json:"token"`
	Value string       `json:"value"`
}

func listTokens(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	user := c.Query("user_id")
	if !p.Admin {
		if user != "" && user != p.UserID {
			return 0, nil, access.ErrForbidden
		}
		user = p.UserID
	}
	out, err := access.ListTokens(ctx, db, user)
	return http.StatusOK, out, err
}

func mintToken(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	var in tokenInput
	if err := bindJSON(c, &in); err != nil {
		return 0, nil, err
	}
	var lifetime time.Duration
	if in.ExpiresIn != "" {
		d, err := access.ParseLifetime(in.ExpiresIn)
		if err != nil {
			return 0, nil, invalidField("expires_in", err.Error())
		}
		lifetime = d
	}
	user := p.UserID
	if in.UserID != "" && in.UserID != p.UserID {
		if !p.Admin {
			return 0, nil, access.ErrForbidden
		}
		user = in.UserID
	}
	t, plain, err := access.MintExpiring(ctx, db, user, in.Name, lifetime)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusCreated, tokenMinted{Token: t, Value: plain}, nil
}

func revokeToken(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	t, err := access.RevokeToken(ctx, db, p, c.Param("id"))
	return http.StatusOK, t, err
}

func setUserDisabled(disabled bool) handler {
	return func(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
		if disabled && c.Param("id") == p.UserID {
			return 0, nil, unprocessable("you cannot disable yourself: another instance admin must")
		}
		return http.StatusNoContent, nil, access.SetUserDisabled(ctx, db, c.Param("id"), disabled)
	}
}
