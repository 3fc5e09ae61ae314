package api

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/workspaces/stopbus"
)

func (s *Server) workspaceRoutes() []route {
	return []route{
		{Method: "POST", Path: "/api/agents/:id/workspace/stop", Tag: "agents", Status: 202,
			Summary: "Stop the agent's sandbox now, ending its background commands; its home is kept",
			Handle:  s.workspaceOrder(false, "stopped by an operator")},
		{Method: "POST", Path: "/api/agents/:id/workspace/reset", Tag: "agents", Status: 202,
			Summary: "Stop the agent's sandbox and delete its home: the next call starts from an empty /home/agent",
			Handle:  s.workspaceOrder(true, "reset by an operator")},
	}
}

// workspaceOrder sends a visible agent's stop or reset to the workers. It
// answers 202: the worker that holds the sandbox carries it out.
func (s *Server) workspaceOrder(removeHome bool, why string) handler {
	return func(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
		a, err := orgs.GetAgent(ctx, db, p, c.Param("id"))
		if err != nil {
			return 0, nil, err
		}
		if s.Redis == nil {
			return 0, nil, &Error{Status: http.StatusServiceUnavailable, Code: "workers_unreachable",
				Message: "the API has no REDIS_URL, through which it tells the workers to stop a sandbox"}
		}
		if err := stopbus.Publish(ctx, s.Redis, stopbus.Order{Agents: []string{a.ID}, RemoveHome: removeHome, Why: why}); err != nil {
			return 0, nil, err
		}
		return http.StatusAccepted, nil, nil
	}
}

// agentLister names the agents whose workspaces a request ends.
type agentLister func(ctx context.Context, db store.DB, id string) ([]string, error)

func theAgent(_ context.Context, _ store.DB, id string) ([]string, error) { return []string{id}, nil }

// endingWorkspaces wraps a delete (a NoTx route, which commits its own
// transaction): the agents it takes with it are listed first, and once it
// has succeeded every worker is told to remove their sandboxes and homes.
// An agent added between the listing and the delete, or an order lost on
// the way, is left to the workers' reaper of orphaned homes.
func (s *Server) endingWorkspaces(list agentLister, why string, del handler) handler {
	return func(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
		agents, err := list(ctx, db, c.Param("id"))
		if err != nil {
			return 0, nil, err
		}
		status, body, err := del(ctx, c, db, p)
		if err != nil {
			return 0, nil, err
		}
		s.sendStop(ctx, stopbus.Order{Agents: agents, RemoveHome: true, Why: why})
		return status, body, nil
	}
}

// sendStop tells the workers, best effort: a lost order is caught up by the
// reaper (deleted agents) or the idle stop.
func (s *Server) sendStop(ctx context.Context, o stopbus.Order) {
	if s.Redis == nil {
		return
	}
	if err := stopbus.Publish(context.WithoutCancel(ctx), s.Redis, o); err != nil {
		s.Log.WarnContext(ctx, "telling the workers to end agent workspaces", "why", o.Why, "agents", len(o.Agents), "err", err)
	}
}

// sandboxToolsTurnedOff reports whether a change took away a tool family
// that runs in the agent's sandbox: what it left running there must end.
func sandboxToolsTurnedOff(before, after orgs.AgentConfig) bool {
	return (before.Coding && !after.Coding) || (before.Browser && !after.Browser) || (before.Scripting && !after.Scripting)
}
