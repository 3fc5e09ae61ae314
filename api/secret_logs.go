package api

import (
	"context"
	"errors"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/workspaces/stopbus"
)

// droppingShellLogs wraps a change of a secret (replace, delete, grant):
// every agent the secret reached before and no longer reaches with the same
// value has its persistent shell logs dropped once the change commits. Those
// logs are kept unredacted in the sandbox, and read back after the secret
// left the agent's redaction set they would show it in clear.
// valueChanges says the change retires the value for every agent it
// reached (a replace or a delete) rather than for those a grant left.
func (s *Server) droppingShellLogs(valueChanges bool, h handler) handler {
	return func(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
		before, err := s.secretReach(ctx, c, db, p)
		if err != nil {
			return 0, nil, err
		}
		status, body, err := h(ctx, c, db, p)
		if err != nil {
			return 0, nil, err
		}
		after := map[string]bool{}
		if !valueChanges {
			if after, err = s.secretReach(ctx, c, db, p); err != nil {
				return 0, nil, err
			}
		}
		var left []string
		for id := range before {
			if !after[id] {
				left = append(left, id)
			}
		}
		if len(left) > 0 {
			afterCommit(c, func() {
				s.sendStop(ctx, stopbus.Order{Agents: left, DropShellLogs: true, Why: "a secret left the agents' redaction set"})
			})
		}
		return status, body, nil
	}
}

// secretReach is the set of agents the route's secret reaches now; empty
// when there is no such secret (yet).
func (s *Server) secretReach(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (map[string]bool, error) {
	owner, err := secretOwner(ctx, c, db, p)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	sec, err := agentsecrets.Get(ctx, db, owner, c.Param("name"))
	if errors.Is(err, store.ErrNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	for _, r := range sec.Reaches {
		out[r.AgentID] = true
	}
	return out, nil
}
