package connectors

import (
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// HealthState is the typed condition of a connection's credential.
type HealthState string

const (
	// HealthHealthy: the credential works or was refreshed successfully.
	HealthHealthy HealthState = "healthy"
	// HealthRefreshFailing: transient refresh failures; retried with
	// exponential backoff (Health.Attempts, Health.NextRetryAt).
	HealthRefreshFailing HealthState = "refresh_failing"
	// HealthReconnectRequired: the provider refused the grant (invalid_grant
	// and equivalents); only a new login helps. The connection is disconnected.
	HealthReconnectRequired HealthState = "reconnect_required"
	// HealthDisconnected: the operator disconnected the login or none is stored.
	HealthDisconnected HealthState = "disconnected"
)

// Health is a connection's health as stored next to its credential.
type Health struct {
	State         HealthState
	Attempts      int       // consecutive failed refreshes
	NextRetryAt   time.Time // refresh_failing: no refresh before this
	LastSuccessAt time.Time
	LastFailureAt time.Time
	LastErrorCode string // an OAuth error code or short class, never a body
}

// Backoff bounds of failed refreshes: base·2^attempts, capped; the health
// write computes the next retry from them in SQL.
const (
	backoffBase = time.Second
	backoffMax  = 5 * time.Minute
)

// CodeDisconnected is the ErrReconnectRequired code of a login whose status
// is disconnected.
const CodeDisconnected = "disconnected"

// CodeIssuerChanged is the ErrReconnectRequired code of an OAuth login
// issued by another authorization server than the one its catalog row now
// names (the MCP server moved, RFC 9728): its tokens are neither refreshed
// at the new server nor sent to the resource, and a new login is needed.
const CodeIssuerChanged = "issuer_changed"

// ErrIssuerChanged is what a provider's Refresh returns for a login of
// another authorization server than the row's (ClassifyOAuthError: permanent,
// CodeIssuerChanged). No request is sent.
var ErrIssuerChanged = errors.New("connectors: the login was issued by another authorization server than the one the server now names")

// ErrReconnectRequired is returned when a connection's login is dead and must
// be authorised again. Its message names the connection and never a secret,
// so it can be a tool result "ERROR: …" line as is.
type ErrReconnectRequired struct {
	ConnectionID uuid.UUID
	Server       string // catalog slug
	Code         string // why, e.g. invalid_grant, expired, disconnected
}

func (e *ErrReconnectRequired) Error() string {
	var why string
	switch e.Code {
	case CodeDisconnected:
		why = "its login was disconnected"
	case "expired":
		why = "its login expired and cannot be renewed"
	case "token_rejected":
		why = "the server no longer accepts its login"
	case CodeIssuerChanged:
		why = "the server moved to another authorization server, which did not issue its login"
	default:
		why = "the provider refused its login (" + e.Code + ")"
	}
	return fmt.Sprintf("connection %s (%s) needs to be reconnected: %s; reconnect it in Tools or with `guilds connections connect %s`",
		label(e.Server), e.ConnectionID, why, e.ConnectionID)
}

// Is makes errors.Is(err, &ErrReconnectRequired{}) match any instance.
func (e *ErrReconnectRequired) Is(target error) bool {
	_, ok := target.(*ErrReconnectRequired)
	return ok
}

// ErrRefreshFailing is returned when a stale credential could not be refreshed
// for a transient reason; the engine retries with backoff.
type ErrRefreshFailing struct {
	ConnectionID uuid.UUID
	Server       string
	Code         string // e.g. http_503, timeout, malformed_response, lock_timeout
	Attempts     int
	NextRetryAt  time.Time
}

func (e *ErrRefreshFailing) Error() string {
	msg := fmt.Sprintf("connection %s (%s): its token could not be renewed (%s)", label(e.Server), e.ConnectionID, e.Code)
	switch {
	case e.Attempts == 1:
		msg += " after 1 attempt"
	case e.Attempts > 1:
		msg += fmt.Sprintf(" after %d attempts", e.Attempts)
	}
	if !e.NextRetryAt.IsZero() {
		msg += "; the platform retries at " + e.NextRetryAt.UTC().Format(time.RFC3339)
	}
	return msg + "; this is usually temporary, try again later"
}

// Is makes errors.Is(err, &ErrRefreshFailing{}) match any instance.
func (e *ErrRefreshFailing) Is(target error) bool {
	_, ok := target.(*ErrRefreshFailing)
	return ok
}

var (
	// ErrNotInUse: the engine was built with no connector in use.
	ErrNotInUse = errors.New("connectors: no connector is configured on this instance")
	// ErrNoCredential: the connection has no stored login (still pending).
	ErrNoCredential = errors.New("connectors: the connection has no stored login yet")
	// ErrUnknownConnection: no such connection.
	ErrUnknownConnection = errors.New("connectors: unknown connection")
)

func label(slug string) string {
	if slug == "" {
		return "?"
	}
	return slug
}
