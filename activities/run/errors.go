package run

import (
	"errors"

	"go.temporal.io/sdk/temporal"

	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/secret"
)

// Types of the non-retryable application errors these activities return.
const (
	ErrTypeStartRefused  = "RunStartRefused"
	ErrTypeNoModelKey    = "NoModelKey"
	ErrTypeModelRejected = "ModelRejected"
	ErrTypeRunGone       = "RunGone"
)

func nonRetryable(typ string, err error) error {
	return temporal.NewNonRetryableApplicationError(err.Error(), typ, nil)
}

// modelError sorts a provider failure: rate limits and server errors are
// retried by the activity's retry policy, anything else fails the run.
func modelError(err error) error {
	var me *models.Error
	if errors.As(err, &me) && !me.Retryable() {
		return nonRetryable(ErrTypeModelRejected, err)
	}
	if errors.Is(err, models.ErrNoKey) || errors.Is(err, secret.ErrUnknownKey) {
		return nonRetryable(ErrTypeNoModelKey, err)
	}
	return err
}
