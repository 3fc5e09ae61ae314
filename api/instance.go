package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/store"
)

// Instance is what GET /api/instance reports about the box.
type Instance struct {
	AuthMode     string                `json:"auth_mode"`
	Integrations []integrations.Status `json:"integrations"`
	// ModelProviders names the providers the box itself holds a key for.
	ModelProviders []string `json:"model_providers"`
	// NoModelKey is true when neither the box nor the caller's organisations
	// (any organisation, for an instance admin) hold a model key: no run of
	// theirs can start.
	NoModelKey bool `json:"no_model_key"`
}

func (s *Server) instanceRoutes() []route {
	return []route{{Method: "GET", Path: "/api/instance", Tag: "instance",
		Summary: "What this box can do: auth mode and the state of each integration",
		Reply:   Instance{}, Handle: s.getInstance}}
}

func (s *Server) getInstance(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	providers := s.Integrations.ModelProviders()
	if providers == nil {
		providers = []string{}
	}
	none := len(providers) == 0
	if none {
		orgs := make([]string, 0, len(p.Orgs))
		for id := range p.Orgs {
			orgs = append(orgs, id)
		}
		held, err := models.AnyOrgKey(ctx, db, orgs, p.Admin)
		if err != nil {
			return 0, nil, err
		}
		none = !held
	}
	return http.StatusOK, Instance{
		AuthMode:       s.AuthMode,
		Integrations:   s.Integrations.All(),
		ModelProviders: providers,
		NoModelKey:     none,
	}, nil
}
