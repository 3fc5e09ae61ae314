package runs

import (
	"context"
	"encoding/json"
	"time"

	"github.com/guilds/guilds/internal/store"
)

// Outcomes of a tool call.
const (
	OutcomeOK          = "ok"
	OutcomeError       = "error"       // the tool ran and failed, or its arguments were refused
	OutcomeRefused     = "refused"     // not offered, or over budget: nothing ran
	OutcomeInterrupted = "interrupted" // the activity was lost and not retried
	OutcomeDenied      = "denied"      // a person refused it, or its approval expired: nothing ran
	OutcomeTimedOut    = "timed_out"   // the service did not answer within the call's bound
)

// ToolCall is the record of one call. Arguments and Result are stamped.
type ToolCall struct {
	RunID      string          `json:"-"`
	Seq        int             `json:"seq"`
	CallID     string          `json:"call_id"`
	Tool       string          `json:"tool"`
	Arguments  string          `json:"arguments"`
	Result     string          `json:"result"`
	Outcome    string          `json:"outcome"`
	StartedAt  time.Time       `json:"started_at"`
	FinishedAt time.Time       `json:"finished_at"`
	DurationMS int             `json:"duration_ms"`
	Metadata   json.RawMessage `json:"metadata"`
}

// SaveToolCall stores a call and its result message in one statement pair.
// When the seq is already taken, the stored call wins and is returned, with
// stored = true, so a retried activity hands back the first result.
func SaveToolCall(ctx context.Context, db store.DB, tc ToolCall) (out ToolCall, stored bool, err error) {
	if prev, err := StoredToolCall(ctx, db, tc.RunID, tc.Seq); err == nil {
		return prev, true, nil
	}
	meta := tc.Metadata
	if len(meta) == 0 {
		meta = json.RawMessage(`{}`)
	}
	tag, err := db.Exec(ctx, `INSERT INTO tool_calls (run_id, seq, call_id, tool_name, arguments, result, outcome,
		started_at, finished_at, duration_ms, metadata)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) ON CONFLICT (run_id, seq) DO NOTHING`,
		tc.RunID, tc.Seq, tc.CallID, tc.Tool, tc.Arguments, tc.Result, tc.Outcome,
		tc.StartedAt, tc.FinishedAt, tc.DurationMS, meta)
	if err != nil {
		return ToolCall{}, false, store.Map(err)
	}
	if tag.RowsAffected() == 0 {
		prev, err := StoredToolCall(ctx, db, tc.RunID, tc.Seq)
		return prev, true, err
	}
	if _, err := AppendMessage(ctx, db, Message{RunID: tc.RunID, Seq: tc.Seq, Role: RoleTool,
		Content: tc.Result, ToolCallID: tc.CallID}); err != nil {
		return ToolCall{}, false, err
	}
	tc.Metadata = meta
	return tc, false, nil
}

// StoredToolCall returns the call stored at seq and makes sure its result
// message is there too. The row and the message are two statements: a worker
// lost between them leaves a call whose result the model would never see,
// and every later attempt finds the row, so the one that does writes the
// message (a no-op when it exists).
func StoredToolCall(ctx context.Context, db store.DB, runID string, seq int) (ToolCall, error) {
	prev, err := GetToolCall(ctx, db, runID, seq)
	if err != nil {
		return ToolCall{}, err
	}
	if _, err := AppendMessage(ctx, db, Message{RunID: runID, Seq: prev.Seq, Role: RoleTool,
		Content: prev.Result, ToolCallID: prev.CallID}); err != nil {
		return ToolCall{}, err
	}
	return prev, nil
}

// GetToolCall returns the call stored at seq.
func GetToolCall(ctx context.Context, db store.DB, runID string, seq int) (ToolCall, error) {
	calls, err := queryToolCalls(ctx, db, `WHERE run_id = $1 AND seq = $2`, runID, seq)
	if err != nil {
		return ToolCall{}, err
	}
	if len(calls) == 0 {
		return ToolCall{}, store.ErrNotFound
	}
	return calls[0], nil
}

// ToolCalls returns the calls of a run in order.
func ToolCalls(ctx context.Context, db store.DB, runID string) ([]ToolCall, error) {
	return queryToolCalls(ctx, db, `WHERE run_id = $1 ORDER BY seq`, runID)
}

func queryToolCalls(ctx context.Context, db store.DB, where string, args ...any) ([]ToolCall, error) {
	rows, err := db.Query(ctx, `SELECT run_id, seq, call_id, tool_name, arguments, result, outcome,
		started_at, finished_at, duration_ms, metadata FROM tool_calls `+where, args...)
	if err != nil {
		return nil, store.Map(err)
	}
	defer rows.Close()
	out := []ToolCall{}
	for rows.Next() {
		var tc ToolCall
		if err := rows.Scan(&tc.RunID, &tc.Seq, &tc.CallID, &tc.Tool, &tc.Arguments, &tc.Result, &tc.Outcome,
			&tc.StartedAt, &tc.FinishedAt, &tc.DurationMS, &tc.Metadata); err != nil {
			return nil, store.Map(err)
		}
		out = append(out, tc)
	}
	return out, store.Map(rows.Err())
}
