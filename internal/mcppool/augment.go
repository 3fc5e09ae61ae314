package mcppool

import (
	"context"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// Servers of revision 2025-11-25 make a task only for a tools/call that
// carries the task parameter, and refuse a call of a tool they list with
// execution.taskSupport "required" that does not (server-everything's
// simulate-research-query answers -32601). Such a call gets the parameter;
// what comes back is a created task like any other (task.go, ADR 0625).

// taskTTLMs is the retention a call asks of its task: the longest a run
// follows one (a day).
const taskTTLMs = int64(24 * 60 * 60 * 1000)

// taskTools holds, per session, the tools its server requires to run as
// tasks, read once from the session's own listing.
type taskTools struct {
	mu       sync.Mutex
	required map[string]bool // nil until read; a failed read is tried again at the next call
}

// needsTask reports whether a call of the remote tool must ask for a task.
// Only a server that declares task-augmented tools/call is asked for its
// listing, once per session.
func (s *session) needsTask(ctx context.Context, remoteName string) (bool, error) {
	caps := s.c.GetServerCapabilities()
	if caps.Tasks == nil || caps.Tasks.Requests == nil || caps.Tasks.Requests.Tools == nil || caps.Tasks.Requests.Tools.Call == nil {
		return false, nil
	}
	s.tasks.mu.Lock()
	defer s.tasks.mu.Unlock()
	if s.tasks.required == nil {
		required := map[string]bool{}
		var cursor mcp.Cursor
		for page := 0; page < MaxListPages; page++ {
			req := mcp.ListToolsRequest{}
			req.Params.Cursor = cursor
			res, err := s.c.ListTools(ctx, req)
			if err != nil {
				return false, err
			}
			for _, t := range res.Tools {
				if t.Execution != nil && t.Execution.TaskSupport == mcp.TaskSupportRequired {
					required[t.Name] = true
				}
			}
			if res.NextCursor == "" || res.NextCursor == cursor {
				break
			}
			cursor = res.NextCursor
		}
		s.tasks.required = required
	}
	return s.tasks.required[remoteName], nil
}
