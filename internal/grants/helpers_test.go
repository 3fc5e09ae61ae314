package grants_test

import (
	"errors"

	"github.com/guilds/guilds/internal/grants"
)

func asDisc(err error, target **grants.ErrConnectionDisconnected) bool { return errors.As(err, target) }
