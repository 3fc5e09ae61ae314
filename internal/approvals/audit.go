package approvals

import (
	"context"

	"github.com/google/uuid"

	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/store"
)

// platformActor takes the steps nobody took: an expiry.
const platformActor = "platform"

func agentActor(r Request) string { return "agent:" + r.AgentID }

// actor is who answered: the operator's user, or an operator the platform
// knows no user of.
func (d Decision) actor() string {
	if d.UserID != "" {
		return "user:" + d.UserID
	}
	return "operator"
}

// record writes one step of a request's life to the audit trail, in the
// caller's transaction: the step is written only when its state change is,
// so each step is one event.
func record(ctx context.Context, db store.DB, r Request, step, actor string) error {
	e := audit.Event{OrganisationID: r.OrganisationID, GuildID: r.GuildID, AgentID: r.AgentID, RunID: r.RunID,
		Seq: r.Seq, Action: audit.ActionApproval, Tool: r.Tool, ArgsDigest: r.ArgsDigest, Outcome: step,
		ApprovalID: r.ID, Actor: actor}
	if uuid.Validate(r.LoginID) == nil {
		e.ConnectionID = r.LoginID
	}
	return audit.Record(ctx, db, e)
}
