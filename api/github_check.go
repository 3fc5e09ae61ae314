package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/githubapp"
	"github.com/guilds/guilds/internal/store"
)

// The check of the box's GitHub App (docs/github-app.md): GitHub's own
// record of the App, read with its JWT, against what the box needs.

type githubCheckReply struct {
	OK       bool                `json:"ok"`
	App      *githubapp.Settings `json:"app,omitempty"`
	Problems []githubapp.Problem `json:"problems"`
	// CallbackURL is the callback to register; GitHub's API does not show
	// the one registered, nor the setup options: Confirm lists them.
	CallbackURL string   `json:"callback_url"`
	Confirm     []string `json:"confirm"`
}

func (s *Server) githubCheckRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/admin/github/app", Tag: "connections", Admin: true,
			Summary: "Read the box's GitHub App from GitHub (with its JWT) and say what differs from what the box needs: permissions, webhook events, id, slug, client id",
			Reply:   githubCheckReply{}, Handle: s.githubCheck, NoTx: true, Timeout: RemoteTimeout},
	}
}

func (s *Server) githubCheck(ctx context.Context, c *gin.Context, _ store.DB, _ access.Principal) (int, any, error) {
	app, err := s.githubApp()
	if err != nil {
		return 0, nil, err
	}
	out := githubCheckReply{Problems: []githubapp.Problem{}}
	if cb, err := s.callbackURL(c); err != nil {
		out.Problems = append(out.Problems, githubapp.Problem{Field: "callback_url", Message: err.Error()})
	} else {
		out.CallbackURL = cb
		out.Confirm = []string{
			"Callback URL: exactly " + cb,
			"Request user authorization (OAuth) during installation: on",
			"Redirect on update: on",
			"Webhook: off (Active unticked)",
		}
	}
	settings, err := app.Settings(ctx)
	var se *githubapp.StatusError
	switch {
	case errors.As(err, &se):
		out.Problems = append(out.Problems, githubapp.Problem{Field: "jwt", Message: "GitHub refused the App's JWT (" + se.Error() +
			"): " + githubapp.VarAppID + " and " + githubapp.VarPrivateKey + " must be the same App's id and a current private key"})
	case err != nil:
		return 0, nil, &Error{Status: http.StatusBadGateway, Code: "upstream_unreachable", Message: "GitHub could not be reached: " + err.Error()}
	default:
		out.App = &settings
		out.Problems = append(out.Problems, app.Check(settings)...)
	}
	out.OK = len(out.Problems) == 0
	return http.StatusOK, out, nil
}
