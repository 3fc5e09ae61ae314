package api

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/budgets"
	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/internal/orgs"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
	"github.com/guilds/guilds/workflows/connect"
	"github.com/guilds/guilds/workflows/run"
)

// Error is an API error with its HTTP status; every error body has the same shape.
type Error struct {
	Status   int                  `json:"-"`
	Code     string               `json:"code"`
	Message  string               `json:"message"`
	Problems []validation.Problem `json:"problems,omitempty"`
	// Budget names the reached limit of a budget_reached refusal.
	Budget *budgets.Reach `json:"budget,omitempty"`
}

func (e *Error) Error() string { return e.Message }

var errNotFoundRoute = &Error{Status: http.StatusNotFound, Code: "not_found", Message: "no such route"}

// badRequest is a 400 for input that could not be read.
func badRequest(msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: "bad_request", Message: msg}
}

// unprocessable is a 422 for content that was read but is refused.
func unprocessable(msg string) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid", Message: msg}
}

// invalidField is a 422 about one field, with the problems list every other
// 422 carries, so clients can show it beside the field.
func invalidField(field, msg string) *Error {
	return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid", Message: field + ": " + msg,
		Problems: []validation.Problem{{Field: field, Message: msg}}}
}

// toAPIError maps domain errors onto statuses: this is the one table, so a
// domain error reads the same from every route. A handler builds an Error
// itself only to name what the domain error cannot (the server a key was
// for). Anything unknown is a 500 whose detail is only logged.
func toAPIError(err error) *Error {
	var apiErr *Error
	var invalid *validation.Error
	var authErr *access.AuthError
	var native *artifacts.Error
	var notSetUp *connections.ErrNotSetUp
	var disconnected *grants.ErrConnectionDisconnected
	var reconnect *connectors.ErrReconnectRequired
	var limit *orgs.LimitError
	var reached *budgets.ReachedError
	switch {
	case errors.As(err, &apiErr):
		return apiErr
	case errors.As(err, &native):
		return nativeError(native)
	case errors.Is(err, connections.ErrPlatformReserved):
		// Says where the box's own credentials come from.
		return &Error{Status: http.StatusForbidden, Code: "platform_scope_reserved", Message: err.Error()}
	case errors.As(err, &reached):
		return budgetError(reached)
	case errors.As(err, &limit):
		return &Error{Status: http.StatusConflict, Code: limit.Code, Message: limit.Error()}
	case errors.As(err, &notSetUp):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "not_set_up", Message: notSetUp.Error()}
	case errors.As(err, &disconnected):
		return &Error{Status: http.StatusConflict, Code: "connection_disconnected", Message: disconnected.Error()}
	case errors.As(err, &reconnect):
		return &Error{Status: http.StatusConflict, Code: "reconnect_required", Message: reconnect.Error()}
	case errors.Is(err, connect.ErrSetup):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "oauth_setup_failed", Message: err.Error()}
	case errors.Is(err, run.ErrSearchAttributesMissing):
		return &Error{Status: http.StatusServiceUnavailable, Code: "temporal_not_ready", Message: run.ErrSearchAttributesMissing.Error()}
	case errors.Is(err, models.ErrNoKey):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "no_model_key", Message: err.Error()}
	case errors.Is(err, models.ErrNoKeyring):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "no_encryption_key", Message: err.Error()}
	case errors.As(err, &invalid):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid", Message: invalid.Error(), Problems: invalid.Problems}
	case errors.Is(err, store.ErrNotFound):
		return &Error{Status: http.StatusNotFound, Code: "not_found", Message: "not found"}
	case errors.Is(err, store.ErrConflict):
		return &Error{Status: http.StatusConflict, Code: "conflict", Message: conflictMessage(store.Constraint(err))}
	case errors.Is(err, store.ErrInvalidReference):
		return &Error{Status: http.StatusUnprocessableEntity, Code: "invalid_reference", Message: referenceMessage(store.Constraint(err))}
	case errors.As(err, &authErr):
		return &Error{Status: http.StatusUnauthorized, Code: authErr.Code, Message: authErr.Message}
	case errors.Is(err, access.ErrUnauthenticated):
		return &Error{Status: http.StatusUnauthorized, Code: "unauthenticated", Message: err.Error()}
	case errors.Is(err, secret.ErrUnknownKey):
		// A value sealed under a key dropped from GUILDS_ENCRYPTION_KEY: the
		// operator's to fix (the message names the key id, never material).
		return &Error{Status: http.StatusServiceUnavailable, Code: "key_unavailable", Message: err.Error()}
	case errors.Is(err, store.ErrBusy):
		return &Error{Status: http.StatusServiceUnavailable, Code: "busy", Message: err.Error()}
	case errors.Is(err, access.ErrForbidden):
		return &Error{Status: http.StatusForbidden, Code: "forbidden", Message: "you may not do this"}
	case errors.Is(err, context.DeadlineExceeded):
		// The route's deadline passed: the work was stopped and, in a
		// transaction, rolled back.
		return &Error{Status: http.StatusServiceUnavailable, Code: "timeout", Message: "the request took too long and was stopped; try again"}
	}
	return nil
}

// nativeError is a native family's refusal (notes, records), which carries
// its own status.
func nativeError(ne *artifacts.Error) *Error {
	code := map[int]string{http.StatusNotFound: "not_found", http.StatusForbidden: "forbidden",
		http.StatusConflict: "conflict", http.StatusUnprocessableEntity: "invalid"}[ne.Status]
	if code == "" {
		code = "error"
	}
	return &Error{Status: ne.Status, Code: code, Message: ne.Message, Problems: ne.Problems}
}

func (s *Server) fail(c *gin.Context, err error) {
	if c.Request.Context().Err() == context.Canceled {
		// The client went away: nobody reads an answer, and it is no fault.
		s.Log.Info("request abandoned by the client", "route", c.FullPath())
		c.Status(499)
		return
	}
	if e := toAPIError(err); e != nil {
		if e.Code == "busy" || e.Code == "timeout" {
			c.Header("Retry-After", "1")
		}
		setBudgetRetryAfter(c, e)
		if e.Code == "not_found" && e.Message == "not found" {
			e = &Error{Status: e.Status, Code: e.Code, Message: notFoundMessage(c.FullPath())}
		}
		writeError(c, e)
		return
	}
	s.Log.Error("request failed", "route", c.FullPath(), "err", err)
	s.Reporter.Error(c.Request.Context(), err, reportTags(c))
	writeError(c, &Error{Status: http.StatusInternalServerError, Code: "internal", Message: "internal error"})
}

func writeError(c *gin.Context, e *Error) {
	c.JSON(e.Status, gin.H{"error": e})
}

// resourceNouns name what a path segment in front of an id holds.
var resourceNouns = map[string]string{
	"orgs": "organisation", "guilds": "guild", "agents": "agent", "runs": "run",
	"collections": "collection", "records": "record", "grants": "grant", "members": "member",
	"model-keys": "model key", "connections": "connection", "servers": "catalog server",
	"issues": "issue", "notes": "note", "tokens": "API token", "users": "user",
}

// notFoundMessage names what a route could not find from the ids in its path,
// so a client knows which id to check. What the caller may not see reads the
// same as what does not exist.
func notFoundMessage(path string) string {
	var nouns []string
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i := 1; i < len(segs); i++ {
		if strings.HasPrefix(segs[i], ":") {
			if noun, ok := resourceNouns[segs[i-1]]; ok {
				nouns = append(nouns, noun)
			}
		}
	}
	switch len(nouns) {
	case 0:
		return "not found: check the ids in the request"
	case 1:
		return "no " + nouns[0] + " with this id is visible to you"
	}
	return "no such " + strings.Join(nouns, " or ") + " is visible to you: check the ids in the path"
}

// conflictMessages explain, per unique constraint, what already exists and what to change.
var conflictMessages = map[string]string{
	"organisations_slug_key":               "an organisation with this slug already exists: choose another name, or give a different slug",
	"guilds_organisation_id_name_key":      "this organisation already has a guild with this name: choose another name",
	"agents_guild_id_name_key":             "this guild already has an agent with this name: choose another name",
	"collections_organisation_id_name_key": "this organisation already has a collection with this name: choose another name",
	"users_email_key":                      "a user with this email already exists",
	"mcp_servers_slug_key":                 "a catalog server with this slug already exists: choose another slug, or change the existing one",
}

func conflictMessage(constraint string) string {
	if msg, ok := conflictMessages[constraint]; ok {
		return msg
	}
	return "this conflicts with something that already exists"
}

// referenceMessages say, per foreign key, which id named nothing.
var referenceMessages = map[string]string{
	"memberships_user_id_fkey":         "no user has this id: create one with POST /api/users",
	"memberships_organisation_id_fkey": "no organisation has this id",
}

func referenceMessage(constraint string) string {
	if msg, ok := referenceMessages[constraint]; ok {
		return msg
	}
	return "refers to something that does not exist"
}
