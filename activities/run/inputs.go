package run

import (
	"context"

	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/runs"
)

// askerFor is the asker of one remote call: a form its server sends to a
// person (config.elicitation "person") is recorded in the operator's inbox,
// the run reads "waiting" while the call holds for the answer, and running
// again once nothing of it waits (docs/adr/0515). The call's activity keeps
// heartbeating meanwhile (watchProgress).
func (a *Activities) askerFor(r runs.Run, seq int, t runs.OfferedTool) inputs.CallAsker {
	return inputs.CallAsker{DB: a.d.DB,
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
