package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/schedules"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/workflows/schedule"
)

func (s *Server) scheduleRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/agents/:id/schedules", Tag: "schedules", Summary: "List an agent's schedules",
			Reply: []schedules.Schedule{}, Handle: listSchedules},
		{Method: "POST", Path: "/api/schedules/:id/pause", Tag: "schedules", Summary: "Pause a schedule: it stops firing",
			Reply: schedules.Schedule{}, Handle: s.changeSchedule("pause"), NoTx: true},
		{Method: "POST", Path: "/api/schedules/:id/resume", Tag: "schedules", Summary: "Resume a schedule; next_run_at is recomputed from now",
			Reply: schedules.Schedule{}, Handle: s.changeSchedule("resume"), NoTx: true},
		{Method: "POST", Path: "/api/schedules/:id/trigger", Tag: "schedules", Summary: "Fire a schedule once now (skipped while its previous run is going)",
			Status: http.StatusAccepted, Handle: s.changeSchedule("trigger"), NoTx: true},
		{Method: "DELETE", Path: "/api/schedules/:id", Tag: "schedules", Summary: "Delete a schedule, in Temporal too",
			Status: http.StatusNoContent, Handle: s.changeSchedule("delete"), NoTx: true},
	}
}

// scheduleManager is the manager the API acts through: the API never creates a
// schedule (agents do, with their tools), so it needs no per-agent limit.
func (s *Server) scheduleManager() *schedule.Manager {
	return &schedule.Manager{Temporal: s.Temporal, TaskQueue: s.RunTaskQueue, Log: s.Log}
}

func listSchedules(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	if _, err := orgs.GetAgent(ctx, db, p, c.Param("id")); err != nil {
		return 0, nil, err
	}
	out, err := schedules.ListByAgent(ctx, db, c.Param("id"))
	return http.StatusOK, out, err
}

// visibleSchedule loads a schedule the principal may see; any other is 404.
func visibleSchedule(ctx context.Context, db store.DB, p access.Principal, id string) (schedules.Schedule, error) {
	sc, err := schedules.Get(ctx, db, id)
	if err != nil {
		return schedules.Schedule{}, err
	}
	if !p.CanSeeOrg(sc.OrganisationID) {
		return schedules.Schedule{}, store.ErrNotFound
	}
	return sc, nil
}

// changeSchedule acts on the Temporal side first and then writes the row, so
// no transaction is held across the Temporal call; a row write that fails
// after it is put right by the worker's reconciliation (the row wins).
func (s *Server) changeSchedule(action string) handler {
	return func(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
		sc, err := visibleSchedule(ctx, db, p, c.Param("id"))
		if err != nil {
			return 0, nil, err
		}
		if s.Temporal == nil {
			return 0, nil, errNoTemporal()
		}
		m := s.scheduleManager()
		switch action {
		case "pause":
			sc, err = m.Pause(ctx, db, sc)
		case "resume":
			sc, err = m.Resume(ctx, db, sc)
		case "trigger":
			err = m.Trigger(ctx, sc)
			return http.StatusAccepted, sc, scheduleError(err)
		case "delete":
			return http.StatusNoContent, nil, scheduleError(m.Delete(ctx, db, sc))
		}
		return http.StatusOK, sc, scheduleError(err)
	}
}

func scheduleError(err error) error {
	if errors.Is(err, schedule.ErrNoTemporal) {
		return errNoTemporal()
	}
	return err
}

// withoutSchedules removes a visible agent's schedules from Temporal before
// its delete runs; the rows go with the agent. Should the delete roll back,
// reconciliation recreates what the rows still hold.
func (s *Server) withoutSchedules(del handler) handler {
	return func(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
		if _, err := orgs.GetAgent(ctx, db, p, c.Param("id")); err != nil {
			return 0, nil, err
		}
		if s.Temporal != nil {
			if err := s.scheduleManager().RemoveAgent(ctx, db, c.Param("id")); err != nil {
				return 0, nil, err
			}
		}
		return del(ctx, c, db, p)
	}
}
