package run

import (
	"context"
	"errors"

	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
)

// ToolLocalName is the tool activity on the fast path: a quick native tool's
// call runs as a local activity of this name, in the worker that runs the
// workflow task, without a trip through the task queue
// (docs/adr/0511-fast-path.md). The name is stable: it is in the markers of
// recorded histories.
const ToolLocalName = "tool_local"

// ToolLocal runs a call as Tool does. A local activity runs again when its
// worker is lost before the workflow task that ran it completes; the call's
// row at (run, seq) makes that second run return the stored result, and only
// tools idempotent besides are offered on this path.
//
// The row and its result message are two statements (runs.SaveToolCall): a
// worker lost between them leaves a call whose result the model would never
// see, so a second run that finds the row stores the message too (a no-op
// when it is there).
func (a *Activities) ToolLocal(ctx context.Context, in ToolInput) (ToolOutput, error) {
	prev, err := runs.GetToolCall(ctx, a.d.DB, in.RunID, in.Seq)
	if errors.Is(err, store.ErrNotFound) {
		return a.Tool(ctx, in)
	}
	if err != nil {
		return ToolOutput{}, err
	}
	if _, err := runs.AppendMessage(ctx, a.d.DB, runs.Message{RunID: in.RunID, Seq: prev.Seq, Role: runs.RoleTool,
		Content: prev.Result, ToolCallID: prev.CallID}); err != nil {
		return ToolOutput{}, err
	}
	return ToolOutput{Seq: prev.Seq, Result: prev.Result, Outcome: prev.Outcome}, nil
}
