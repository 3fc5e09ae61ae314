package mcppool

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// A task of revision 2025-11-25 that needs input reads input_required and
// lists nothing: its server queues the elicitation/create (tied to the task
// by relatedTask) and sends it only on the stream of a tasks/result request,
// which it keeps open until the task ends (docs/adr/0625). The poll opens
// that stream. What arrives on it is answered by the session's elicitation
// handler, as a call's own form is: declined, filled with its defaults, or
// put before a person through the poll's asker and waited for in place,
// within the row's form wait. The answer goes back as the reply, on the
// session that holds the stream. The stream then ends with the task's
// result, or is let go just before the poll's deadline while the task still
// runs; the next poll reads where it stands.

// streamMargin is kept of the poll's deadline when a tasks/result stream is
// let go, so that a task still running reads as such, not as a timeout.
const streamMargin = time.Second

type streamCountKey struct{}

// SetRequestHandler wraps mcp-go's handler of the server's own requests
// (forms, pings) to count those answered on a tasks/result stream the poll
// opened: they are the task's input requests.
func (t *rawStreamable) SetRequestHandler(h transport.RequestHandler) {
	t.StreamableHTTP.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		res, err := h(ctx, req)
		if n, ok := ctx.Value(streamCountKey{}).(*atomic.Int32); ok && req.Method == string(mcp.MethodElicitationCreate) {
			n.Add(1)
		}
		return res, err
	})
}

// resultStream asks for the task's result while it waits for input, so
// that the server sends what it queued for it. result is nil when the task
// still runs at the end of the poll's time, or when the server refused the
// request (logged: the task is polled on as before); answered counts the
// forms answered on the stream. An error is the poll's own end.
func (p *Pool) resultStream(ctx context.Context, s *session, taskID string) (result json.RawMessage, answered int, err error) {
	var (
		sctx   context.Context
		cancel context.CancelFunc
	)
	if dl, ok := ctx.Deadline(); ok {
		sctx, cancel = context.WithDeadline(ctx, dl.Add(-streamMargin))
	} else {
		sctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	var n atomic.Int32
	sctx = context.WithValue(sctx, streamCountKey{}, &n)
	sctx, kept := withRawResult(sctx, string(mcp.MethodTasksResult))
	_, err = s.c.TaskResult(sctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: taskID}})
	answered = int(n.Load())
	switch {
	case ctx.Err() != nil:
		return nil, answered, ctx.Err()
	case err != nil && sctx.Err() == nil:
		p.log.Warn("mcppool: tasks/result of a task waiting for input failed; polling on",
			"server", s.info.Slug, "err", oneLine(err))
		return nil, answered, nil
	case err != nil:
		return nil, answered, nil // still running: the next poll reads it
	}
	return kept.get(), answered, nil
}
