package run

import (
	"context"

	"github.com/guilds/guilds/internal/native/issues"
	"github.com/guilds/guilds/internal/native/scripts"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
)

// currentOfferer is an Offerer that can resolve the offer again without the
// run-start work (re-listing remote servers), for the checks of later turns.
// GrantsOfferer is one.
type currentOfferer interface {
	Current(ctx context.Context, db store.DB, agentID, trigger string) (Offer, error)
}

// nowOff returns the native tools of the snapshot that the agent is no longer
// offered: a binding turned off, or an agent flag cleared, since the run
// started. Later turns stop showing them and a call to one is refused.
// Scripts offered as tools of their own run through script_run, so they go
// with it. report_issue is never off. When the offer cannot be resolved now (a login
// went disconnected mid-run, say), the snapshot stands and nothing is dropped.
func (a *Activities) nowOff(ctx context.Context, r runs.Run, snap runs.Snapshot) map[string]bool {
	co, ok := a.d.Offerer.(currentOfferer)
	if !ok {
		return nil // an offerer without bindings has nothing an operator could turn off
	}
	offer, err := co.Current(ctx, a.d.DB, r.AgentID, r.Trigger)
	if err != nil {
		a.d.Log.WarnContext(ctx, "run: could not re-check the native tools offered; keeping the snapshot",
			"run_id", r.ID, "agent_id", r.AgentID, "err", err)
		return nil
	}
	on := make(map[string]bool, len(offer.Tools))
	for _, t := range offer.Tools {
		if t.Kind == "native" {
			on[t.Name] = true
		}
	}
	off := map[string]bool{}
	for _, t := range snap.Tools {
		if t.Kind == "native" && t.Name != issues.ToolName && !on[t.Name] {
			off[t.Name] = true
		}
	}
	if !on[scripts.ToolRun] {
		for _, t := range snap.Tools {
			if t.Kind == scripts.KindScript {
				off[t.Name] = true
			}
		}
	}
	return off
}
