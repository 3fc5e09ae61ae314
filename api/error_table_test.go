package api

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/models"
	"github.com/guilds/guilds/internal/native/artifacts"
	"github.com/guilds/guilds/workflows/connect"
)

// Domain errors map to statuses in toAPIError, whichever route returns them
// and however wrapped, not in the handlers that happen to expect them.
func TestDomainErrorsMapInOneTable(t *testing.T) {
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{connections.ErrPlatformReserved, http.StatusForbidden, "platform_scope_reserved"},
		{&connections.ErrNotSetUp{Server: "Linear", Missing: []string{"LINEAR_CLIENT_ID"}}, http.StatusUnprocessableEntity, "not_set_up"},
		{&grants.ErrConnectionDisconnected{ServerSlug: "linear"}, http.StatusConflict, "connection_disconnected"},
		{&connectors.ErrReconnectRequired{Server: "linear", Code: "expired"}, http.StatusConflict, "reconnect_required"},
		{connect.ErrSetup, http.StatusUnprocessableEntity, "oauth_setup_failed"},
		{models.ErrNoKey, http.StatusUnprocessableEntity, "no_model_key"},
		{models.ErrNoKeyring, http.StatusUnprocessableEntity, "no_encryption_key"},
		{&artifacts.Error{Status: http.StatusConflict, Message: "taken"}, http.StatusConflict, "conflict"},
	}
	for _, tc := range cases {
		wrapped := fmt.Errorf("somewhere below: %w", tc.err)
		e := toAPIError(wrapped)
		if e == nil || e.Status != tc.status || e.Code != tc.code {
			t.Errorf("%T: got %+v, want %d %s", tc.err, e, tc.status, tc.code)
		}
	}
}
