package run

import (
	"context"
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
// A call already stored has its result message repaired by
// runs.StoredToolCall, on this path as on the activity path.
func (a *Activities) ToolLocal(ctx context.Context, in ToolInput) (ToolOutput, error) {
	return a.Tool(ctx, in)
}
