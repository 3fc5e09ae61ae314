package groupchat

import (
	"context"
	"encoding/json"

	"github.com/jackc/pgx/v5"

	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/validation"
)

// RecordRoute stores the routing decision of a message once: when one is
// already stored (a retried or repeated decision) that one is returned and r
// is dropped, so a message is routed exactly once.
func RecordRoute(ctx context.Context, db store.DB, messageID string, r Route) (Route, error) {
	if r.Recipients == nil {
		r.Recipients = []Recipient{}
	}
	_, err := db.Exec(ctx, `INSERT INTO group_routes (message_id, method, recipients, history, note)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (message_id) DO NOTHING`,
		messageID, r.Method, r.recipientsJSON(), r.History, r.Note)
	if err != nil {
		return Route{}, store.Map(err)
	}
	return RouteOf(ctx, db, messageID)
}

// RouteOf returns the stored decision of a message (ErrNotFound before it).
func RouteOf(ctx context.Context, db store.DB, messageID string) (Route, error) {
	var r Route
	var recipients []byte
	err := db.QueryRow(ctx, `SELECT method, recipients, history, note, created_at FROM group_routes WHERE message_id = $1`,
		messageID).Scan(&r.Method, &recipients, &r.History, &r.Note, &r.CreatedAt)
	if err != nil {
		return Route{}, store.Map(err)
	}
	r.Recipients = []Recipient{}
	return r, json.Unmarshal(recipients, &r.Recipients)
}

func attachRoutes(ctx context.Context, db store.DB, msgs []*Message) error {
	if len(msgs) == 0 {
		return nil
	}
	ids := make([]string, len(msgs))
	byID := make(map[string]*Message, len(msgs))
	for i, m := range msgs {
		ids[i], byID[m.ID] = m.ID, m
	}
	rows, err := db.Query(ctx, `SELECT message_id, method, recipients, history, note, created_at
		FROM group_routes WHERE message_id = ANY($1::uuid[])`, ids)
	if err != nil {
		return store.Map(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var r Route
		var recipients []byte
		if err := rows.Scan(&id, &r.Method, &recipients, &r.History, &r.Note, &r.CreatedAt); err != nil {
			return store.Map(err)
		}
		if err := json.Unmarshal(recipients, &r.Recipients); err != nil {
			return err
		}
		byID[id].Route = &r
	}
	return store.Map(rows.Err())
}

// Delivery is the run a recipient of a message was given, or why none.
type Delivery struct {
	MessageID string `json:"message_id"`
	AgentID   string `json:"agent_id"`
	RunID     string `json:"run_id,omitempty"`
	Skipped   string `json:"skipped,omitempty"`
}

// FindDelivery returns the delivery of a message to an agent (ErrNotFound before it).
func FindDelivery(ctx context.Context, db store.DB, messageID, agentID string) (Delivery, error) {
	d := Delivery{MessageID: messageID, AgentID: agentID}
	err := db.QueryRow(ctx, `SELECT coalesce(run_id::text, ''), skipped FROM group_deliveries
		WHERE message_id = $1 AND agent_id = $2`, messageID, agentID).Scan(&d.RunID, &d.Skipped)
	return d, store.Map(err)
}

// RecordDelivery stores a delivery; a second one for the same message and
// agent is ErrConflict.
func RecordDelivery(ctx context.Context, tx pgx.Tx, d Delivery) error {
	_, err := tx.Exec(ctx, `INSERT INTO group_deliveries (message_id, agent_id, run_id, skipped) VALUES ($1, $2, $3, $4)`,
		d.MessageID, d.AgentID, nullable(d.RunID), d.Skipped)
	return store.Map(err)
}

// DeliveryOfRun returns the delivery that started a run: the message a
// group-triggered run answers. Any other run is ErrNotFound.
func DeliveryOfRun(ctx context.Context, db store.DB, runID string) (Delivery, error) {
	d := Delivery{RunID: runID}
	err := db.QueryRow(ctx, `SELECT message_id, agent_id, skipped FROM group_deliveries WHERE run_id = $1`, runID).
		Scan(&d.MessageID, &d.AgentID, &d.Skipped)
	return d, store.Map(err)
}

// SetResponders replaces a guild's designated responders. Every id must be
// an agent of the guild.
func SetResponders(ctx context.Context, tx pgx.Tx, guildID string, agentIDs []string) error {
	if agentIDs == nil {
		agentIDs = []string{}
	}
	var known int
	if err := tx.QueryRow(ctx, `SELECT count(DISTINCT id) FROM agents WHERE guild_id = $1 AND id::text = ANY($2::text[])`,
		guildID, agentIDs).Scan(&known); err != nil {
		return store.Map(err)
	}
	distinct := map[string]bool{}
	for _, id := range agentIDs {
		distinct[id] = true
	}
	if known != len(distinct) {
		var probs validation.Problems
		probs.Add("agent_ids", "must name agents of this guild only")
		return probs.Err()
	}
	if _, err := tx.Exec(ctx, `DELETE FROM group_responders WHERE guild_id = $1`, guildID); err != nil {
		return store.Map(err)
	}
	_, err := tx.Exec(ctx, `INSERT INTO group_responders (guild_id, agent_id)
		SELECT $1, id::uuid FROM unnest($2::text[]) AS id ON CONFLICT DO NOTHING`, guildID, agentIDs)
	return store.Map(err)
}
