package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/integrations"
	"github.com/guilds/guilds/internal/store"
)

// Instance is what GET /api/instance reports about the box.
type Instance struct {
	AuthMode     string                `json:"auth_mode"`
	Integrations []integrations.Status `json:"integrations"`
	// ModelProviders names the providers the box itself holds a key for.
	ModelProviders []string `json:"model_providers"`
	// NoModelKey is true when the box holds no model key at all (organisations may still hold their own).
	NoModelKey bool `json:"no_model_key"`
}

func (s *Server) instanceRoutes() []route {
	return []route{{Method: "GET", Path: "/api/instance", Tag: "instance",
		Summary: "What this box can do: auth mode and the state of each integration",
		Reply:   Instance{}, Handle: s.getInstance}}
}

func (s *Server) getInstance(ctx context.Context, c *gin.Context, _ store.DB, _ access.Principal) (int, any, error) {
	providers := s.Integrations.ModelProviders()
	if providers == nil {
		providers = []string{}
	}
	return http.StatusOK, Instance{
		AuthMode:       s.AuthMode,
		Integrations:   s.Integrations.All(),
		ModelProviders: providers,
		NoModelKey:     len(providers) == 0,
	}, nil
}
