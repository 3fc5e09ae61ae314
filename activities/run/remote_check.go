package run

import (
	"context"
	"errors"
	"fmt"

	"github.com/guilds/guilds/internal/runs"
)

// remoteRefusal says why a remote or adapter tool of the snapshot must not be
// called now ("" when it may): the grants resolution no longer offers it with
// the same login, because its server, the tool itself (binding or overlay) or
// its login was turned off or disconnected since the run started. An operator
// who switches a tool off during an incident stops the run's next call.
//
// The check fails closed: an offer that cannot be resolved now refuses the
// call, as it would refuse the run's start (a login of the chain is
// disconnected) — the pool checks the call's own login again in any case.
func (a *Activities) remoteRefusal(ctx context.Context, r runs.Run, t runs.OfferedTool) string {
	co, ok := a.d.Offerer.(currentOfferer)
	if !ok {
		return "" // an offerer without bindings has nothing an operator could turn off
	}
	offer, err := co.Current(ctx, a.d.DB, r.AgentID, r.Trigger)
	if err != nil {
		var refused *StartRefusedError
		if errors.As(err, &refused) {
			return fmt.Sprintf("%s cannot be called now: %s", t.Name, refused.Reason)
		}
		a.d.Log.WarnContext(ctx, "run: could not re-check a remote tool; refusing the call",
			"run_id", r.ID, "tool", t.Name, "err", err)
		return fmt.Sprintf("%s cannot be called now: its grants could not be checked; try again later", t.Name)
	}
	for _, now := range offer.Tools {
		if now.Name == t.Name && now.Kind == "mcp" && now.ConnectionID == t.ConnectionID && now.RemoteName == t.RemoteName {
			return ""
		}
	}
	return fmt.Sprintf("%s was turned off since this run started (its server, the tool or its login); do not call it again", t.Name)
}
