// Package audit keeps the audit trail: who did what with which login, for
// every tool call and every change to a login, a binding or a secret. It
// owns the table audit_events. A row holds ids, names, a digest of the
// call's arguments and how it went, never arguments or results.
package audit

import (
	"context"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// Actions an event records.
const (
	ActionToolCall      = "tool_call"
	ActionConnect       = "connect"
	ActionDisconnect    = "disconnect"
	ActionRefreshFailed = "refresh_failed"
	ActionBinding       = "binding"
	ActionSecretRead    = "secret_read"
	ActionSecretGrant   = "secret_grant"
	ActionApproval      = "approval"
)

// The steps of an approval request (action approval), each its own event
// with who took it (actor) and when (at): proposed, then one answer
// (approved, denied or expired), then, for an approved call, executed when
// it starts and returned when its result is stored.
const (
	ApprovalProposed = "proposed"
	ApprovalApproved = "approved"
	ApprovalDenied   = "denied"
	ApprovalExpired  = "expired"
	ApprovalExecuted = "executed"
	ApprovalReturned = "returned"
)

// Event is one row of the trail.
type Event struct {
	ID             int64     `json:"id"`
	At             time.Time `json:"at"`
	OrganisationID string    `json:"organisation_id,omitempty"`
	GuildID        string    `json:"guild_id,omitempty"`
	AgentID        string    `json:"agent_id,omitempty"`
	RunID          string    `json:"run_id,omitempty"`
	Seq            int       `json:"seq,omitempty"`
	Trigger        string    `json:"trigger,omitempty"`
	Action         string    `json:"action"`
	Tool           string    `json:"tool,omitempty"`
	Kind           string    `json:"kind,omitempty"` // native, mcp, script…
	// The login that served the call: its id, the scope that owns it and
	// its account hint, as they were when the call ran.
	ConnectionID string `json:"connection_id,omitempty"`
	LoginScope   string `json:"login_scope,omitempty"`
	AccountHint  string `json:"account_hint,omitempty"`
	ArgsDigest   string `json:"args_digest,omitempty"`
	Outcome      string `json:"outcome,omitempty"`
	DurationMS   int    `json:"duration_ms,omitempty"`
	ResultBytes  int    `json:"result_bytes,omitempty"`
	ApprovalID   string `json:"approval_id,omitempty"`
	Actor        string `json:"actor,omitempty"` // user:…, agent:…, platform
}

// Record writes one event. A tool call's event is written once per call
// (run, seq): a retried write keeps the first. When the event names a login
// but not its scope and hint, they are read as they stand now, in the same
// statement.
func Record(ctx context.Context, db store.DB, e Event) error {
	_, err := db.Exec(ctx, `INSERT INTO audit_events (organisation_id, guild_id, agent_id, run_id, seq, trigger, action,
		tool, kind, connection_id, login_scope, account_hint, args_digest, outcome, duration_ms, result_bytes, approval_id, actor)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10,
			CASE WHEN $11 = '' THEN coalesce(c.owner_scope, '') ELSE $11 END,
			CASE WHEN $12 = '' THEN coalesce(c.account_hint, '') ELSE $12 END,
			$13, $14, $15, $16, $17, $18
		FROM (SELECT 1) one LEFT JOIN mcp_connections c ON c.id = $10::uuid
		ON CONFLICT DO NOTHING`,
		null(e.OrganisationID), null(e.GuildID), null(e.AgentID), null(e.RunID), nullInt(e.Seq), e.Trigger, e.Action,
		e.Tool, e.Kind, null(e.ConnectionID), e.LoginScope, e.AccountHint, e.ArgsDigest, e.Outcome, e.DurationMS,
		e.ResultBytes, null(e.ApprovalID), e.Actor)
	return store.Map(err)
}

// Prune deletes the events older than before, in batches, and reports how
// many went.
func Prune(ctx context.Context, db store.DB, before time.Time) (int64, error) {
	var total int64
	for {
		tag, err := db.Exec(ctx, `DELETE FROM audit_events WHERE id IN
			(SELECT id FROM audit_events WHERE at < $1 LIMIT 10000)`, before)
		if err != nil {
			return total, store.Map(err)
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < 10000 {
			return total, nil
		}
	}
}

func null(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func nullInt(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

// RecordEach writes one event per tool name, the rest of e shared, in one
// statement (an agent's secrets read together, one event each).
func RecordEach(ctx context.Context, db store.DB, e Event, tools []string) error {
	if len(tools) == 0 {
		return nil
	}
	_, err := db.Exec(ctx, `INSERT INTO audit_events (organisation_id, guild_id, agent_id, run_id, seq, trigger, action,
		tool, kind, outcome, actor)
		SELECT $1, $2, $3, $4, $5, $6, $7, t, $9, $10, $11 FROM unnest($8::text[]) t`,
		null(e.OrganisationID), null(e.GuildID), null(e.AgentID), null(e.RunID), nullInt(e.Seq), e.Trigger, e.Action,
		tools, e.Kind, e.Outcome, e.Actor)
	return store.Map(err)
}
