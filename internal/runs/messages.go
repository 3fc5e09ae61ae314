package runs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// Message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// ToolCallRequest is one tool call as the model asked for it.
type ToolCallRequest struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON text as the model sent it (possibly malformed)
}

// Message is one entry of a run's conversation.
type Message struct {
	RunID      string            `json:"-"`
	Seq        int               `json:"seq"`
	Role       string            `json:"role"`
	Content    string            `json:"content"`
	ToolCalls  []ToolCallRequest `json:"tool_calls,omitempty"`
	ToolCallID string            `json:"tool_call_id,omitempty"`
	CreatedAt  time.Time         `json:"created_at"`
}

// AppendMessage stores m at its seq. When that seq is already taken (a
// retried activity), the stored message is returned and m is dropped.
func AppendMessage(ctx context.Context, db store.DB, m Message) (Message, error) {
	var calls []byte
	if len(m.ToolCalls) > 0 {
		calls, _ = json.Marshal(m.ToolCalls)
	}
	_, err := db.Exec(ctx, `INSERT INTO messages (run_id, seq, role, content, tool_calls, tool_call_id)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run_id, seq) DO NOTHING`,
		m.RunID, m.Seq, m.Role, m.Content, calls, m.ToolCallID)
	if err != nil {
		return Message{}, store.Map(err)
	}
	return GetMessage(ctx, db, m.RunID, m.Seq)
}

// GetMessage returns the message at seq.
func GetMessage(ctx context.Context, db store.DB, runID string, seq int) (Message, error) {
	msgs, err := queryMessages(ctx, db, `WHERE run_id = $1 AND seq = $2`, runID, seq)
	if err != nil {
		return Message{}, err
	}
	if len(msgs) == 0 {
		return Message{}, store.ErrNotFound
	}
	return msgs[0], nil
}

// Messages returns the messages of a run with seq greater than after, in order.
func Messages(ctx context.Context, db store.DB, runID string, after int) ([]Message, error) {
	return queryMessages(ctx, db, `WHERE run_id = $1 AND seq > $2 ORDER BY seq`, runID, after)
}

func queryMessages(ctx context.Context, db store.DB, where string, args ...any) ([]Message, error) {
	rows, err := db.Query(ctx, `SELECT run_id, seq, role, content, tool_calls, tool_call_id, created_at
		FROM messages `+where, args...)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []Message{}
	for rows.Next() {
		var m Message
		var calls []byte
		if err := rows.Scan(&m.RunID, &m.Seq, &m.Role, &m.Content, &calls, &m.ToolCallID, &m.CreatedAt); err != nil {
			return nil, store.Map(err)
		}
		if len(calls) > 0 {
			if err := json.Unmarshal(calls, &m.ToolCalls); err != nil {
				return nil, err
			}
		}
		out = append(out, m)
	}
	return out, store.Map(rows.Err())
}
