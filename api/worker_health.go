package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/workerhealth"
)

// workerHealthRoutes: whether the workers' sandbox engine answers, as they
// last reported it (the API process has no engine to ask).
func (s *Server) workerHealthRoutes() []route {
	return []route{{Method: "GET", Path: "/api/worker-health", Tag: "instance",
		Summary: "Whether code tools can run: the workers' sandbox engine as last reported, with what to do when it is down",
		Reply:   workerhealth.State{}, Handle: getWorkerHealth}}
}

func getWorkerHealth(ctx context.Context, _ *gin.Context, db store.DB, _ access.Principal) (int, any, error) {
	st, err := workerhealth.Engine(ctx, db)
	if err != nil {
		return 0, nil, err
	}
	// The engine's own words can name the worker's paths and sockets: an
	// operator reads the state and what to do; the worker's log has the rest.
	st.Error = ""
	return http.StatusOK, st, nil
}
