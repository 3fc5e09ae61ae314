package agentsecrets

import (
	"context"
	"encoding/json"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// AuditEntry is one recorded change: who, what, when; never a value.
type AuditEntry struct {
	ID         int64           `json:"id"`
	SecretID   string          `json:"secret_id,omitempty"`
	OwnerScope Scope           `json:"owner_scope"`
	OwnerID    string          `json:"owner_id"`
	Name       string          `json:"name"`
	Action     string          `json:"action"` // set, replace, delete, grant, revoke, ungrant, request, provide, decline
	Actor      string          `json:"actor"`
	Detail     json.RawMessage `json:"detail"`
	At         time.Time       `json:"at"`
}

func recordChange(ctx context.Context, db store.DB, owner Place, secretID, name, action, actor string, detail map[string]any) error {
	if detail == nil {
		detail = map[string]any{}
	}
	raw, err := json.Marshal(detail)
	if err != nil {
		return err
	}
	var sid *string
	if secretID != "" {
		sid = &secretID
	}
	_, err = db.Exec(ctx, `INSERT INTO agent_secret_audit (organisation_id, secret_id, owner_scope, owner_id, name, action, actor, detail)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, owner.OrgID, sid, owner.Scope, owner.ID(), name, action, actor, raw)
	return store.Map(err)
}

// Audit lists an organisation's secret changes, newest first (at most limit).
func Audit(ctx context.Context, db store.DB, orgID string, limit int) ([]AuditEntry, error) {
	if limit <= 0 || limit > 500 {
		limit = 200
	}
	rows, err := db.Query(ctx, `SELECT id, coalesce(secret_id::text, ''), owner_scope, owner_id::text, name, action, actor, detail, at
		FROM agent_secret_audit WHERE organisation_id = $1 ORDER BY at DESC, id DESC LIMIT $2`, orgID, limit)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []AuditEntry{}
	for rows.Next() {
		var e AuditEntry
		if err := rows.Scan(&e.ID, &e.SecretID, &e.OwnerScope, &e.OwnerID, &e.Name, &e.Action, &e.Actor, &e.Detail, &e.At); err != nil {
			return nil, store.Map(err)
		}
		out = append(out, e)
	}
	return out, store.Map(rows.Err())
}
