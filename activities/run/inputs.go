package run

import (
	"context"
	"fmt"
	"time"

	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/runs"
)

// askerFor is the asker of one remote call: a form its server sends to a
// person (config.elicitation "person") is recorded in the operator's inbox,
// the run reads "waiting" while the call holds for the answer, and running
// again once nothing of it waits (docs/adr/0515). The call's activity keeps
// heartbeating meanwhile (watchProgress).
//
// A stateless server's input_required is held instead, where the worker has
// the keyring: the call ends, the run waits in its workflow for the
// operator's waiting time (heldWait), and the next attempt sends the answers.
func (a *Activities) askerFor(r runs.Run, seq int, t runs.OfferedTool) *inputs.CallAsker {
	return &inputs.CallAsker{DB: a.d.DB, Keyring: a.d.Keyring,
		DurableWait: func(ctx context.Context) (time.Duration, error) { return a.heldWait(ctx, r, t) },
		At: inputs.Request{RunID: r.ID, Seq: seq, OrganisationID: r.OrganisationID, GuildID: r.GuildID,
			AgentID: r.AgentID, Tool: t.Name, Server: t.ServerSlug},
		Waiting: func(ctx context.Context, req inputs.Request) error {
			a.d.Log.InfoContext(ctx, "tool call waits for a person's input", "run_id", r.ID, "seq", seq,
				"tool", t.Name, "request_id", req.ID, "mode", req.Mode)
			return runs.MarkWaiting(ctx, a.d.DB, r.ID)
		},
		Settled: func(ctx context.Context, req inputs.Request) error {
			a.d.Log.InfoContext(ctx, "a person's input settled", "run_id", r.ID, "seq", seq,
				"request_id", req.ID, "state", req.State)
			return a.resumeIfNoneWaits(ctx, r.ID)
		},
	}
}

// heldWait is how long a run waits for the answer to a held form: the
// waiting time operators set for approvals of the tool at the agent's scopes
// (the narrowest setting decides, ask or not), a day when none says. A form
// held in its activity keeps the catalog row's bound instead.
func (a *Activities) heldWait(ctx context.Context, r runs.Run, t runs.OfferedTool) (time.Duration, error) {
	set, err := approvals.Resolve(ctx, a.d.DB, approvals.Place{OrganisationID: r.OrganisationID, GuildID: r.GuildID, AgentID: r.AgentID}, t.Name)
	if err != nil {
		return 0, fmt.Errorf("read the waiting time: %w", err)
	}
	if set.Decided && set.Wait > 0 {
		return min(set.Wait, approvals.MaxWait), nil
	}
	return approvals.DefaultWait, nil
}
