package api

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/breaker"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/store"
)

// connectionHealth is a login's credential health as the connector engine
// keeps it; it never carries a credential value.
type connectionHealth struct {
	ConnectionID  string     `json:"connection_id"`
	Status        string     `json:"status"`
	State         string     `json:"state"` // healthy, refresh_failing, reconnect_required or disconnected
	Attempts      int        `json:"attempts"`
	NextRetryAt   *time.Time `json:"next_retry_at"`
	LastSuccessAt *time.Time `json:"last_success_at"`
	LastFailureAt *time.Time `json:"last_failure_at"`
	LastErrorCode string     `json:"last_error_code"`
	// Calls is the login's circuit breaker: flowing, paused (calls are
	// refused until PausedUntil) or trial_due (the next call is the trial).
	Calls          string     `json:"calls"`
	FailuresInARow int        `json:"failures_in_a_row"`
	PausedUntil    *time.Time `json:"paused_until"`
}

func (s *Server) connectionHealthRoutes() []route {
	return []route{
		{Method: "GET", Path: "/api/mcp/connections/:id/health", Tag: "connections",
			Summary: "A login's health: credential state, failed refresh attempts, next retry, last success and failure; whether its calls are paused after failures in a row, and until when",
			Reply:   connectionHealth{}, Handle: s.getConnectionHealth},
	}
}

func (s *Server) getConnectionHealth(ctx context.Context, c *gin.Context, db store.DB, p access.Principal) (int, any, error) {
	conn, err := connections.GetConnection(ctx, db, p, c.Param("id"))
	if err != nil {
		return 0, nil, err
	}
	if s.MCP.Engine == nil {
		return 0, nil, notConfigured()
	}
	got, err := s.MCP.Engine.Get(ctx, uuid.MustParse(conn.ID))
	if err != nil {
		return 0, nil, err
	}
	br, err := breaker.Get(ctx, db, conn.ID)
	if err != nil {
		return 0, nil, err
	}
	h := got.Health
	opt := func(t time.Time) *time.Time {
		if t.IsZero() {
			return nil
		}
		return &t
	}
	return http.StatusOK, connectionHealth{ConnectionID: conn.ID, Status: string(got.Status), State: string(h.State),
		Attempts: h.Attempts, NextRetryAt: opt(h.NextRetryAt), LastSuccessAt: opt(h.LastSuccessAt),
		LastFailureAt: opt(h.LastFailureAt), LastErrorCode: h.LastErrorCode,
		Calls: callsState(br, time.Now()), FailuresInARow: br.Failures, PausedUntil: br.PausedUntil}, nil
}

func callsState(b breaker.State, now time.Time) string {
	switch {
	case b.PausedUntil == nil:
		return "flowing"
	case now.Before(*b.PausedUntil):
		return "paused"
	default:
		return "trial_due"
	}
}
