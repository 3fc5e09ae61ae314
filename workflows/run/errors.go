package run

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	runact "github.com/guilds/guilds/activities/run"
)

// Application error types a run fails with; the API maps them to statuses.
const (
	ErrTypeStartRefused  = runact.ErrTypeStartRefused  // a disconnected enabled MCP server: 422
	ErrTypeNoModelKey    = runact.ErrTypeNoModelKey    // no key for the provider: 422
	ErrTypeModelRejected = runact.ErrTypeModelRejected // the provider refused the request
	ErrTypeRunGone       = runact.ErrTypeRunGone       // the run or its agent was deleted
)

// failureMessage is the message stored on a failed run: the application
// error's own message when there is one, not Temporal's wrapping.
func failureMessage(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Message()
	}
	var timeout *temporal.TimeoutError
	if errors.As(err, &timeout) {
		return "timed out: " + timeout.Error()
	}
	return err.Error()
}

// ErrorType returns the application error type of a run failure, or "".
func ErrorType(err error) string {
	var app *temporal.ApplicationError
	if errors.As(err, &app) {
		return app.Type()
	}
	return ""
}
