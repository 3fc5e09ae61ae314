package mcppool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/telemetry"
	"github.com/guilds/guilds/internal/tools"
)

// The MCP Tasks extension (SEP-2663, docs/adr/0625): the pool declares it, so
// a server may answer a tools/call with a task instead of a result. mcp-go
// v1.2.1 knows the 2025-11-25 task types (nested "task", pollInterval,
// tasks/result) but not the extension's wire (a flat CreateTaskResult with
// resultType "task", pollIntervalMs, the result inlined in tasks/get,
// tasks/update): the session's transport keeps the raw result of the
// requests sent under withRawResult, and the pool reads both shapes there.

// TasksExtension is the extension's identifier in capabilities.extensions.
const TasksExtension = "io.modelcontextprotocol/tasks"

type rawResultKey struct{}

// rawResult keeps the raw result of the last request of one method.
type rawResult struct {
	method string
	mu     sync.Mutex
	raw    json.RawMessage
}

func withRawResult(ctx context.Context, method string) (context.Context, *rawResult) {
	r := &rawResult{method: method}
	return context.WithValue(ctx, rawResultKey{}, r), r
}

func keepRawResult(ctx context.Context, req transport.JSONRPCRequest, res *transport.JSONRPCResponse) {
	r, ok := ctx.Value(rawResultKey{}).(*rawResult)
	if !ok || res == nil || req.Method != r.method {
		return
	}
	r.mu.Lock()
	r.raw = res.Result
	r.mu.Unlock()
}

func (r *rawResult) get() json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.raw
}

// wireTask is a task as either revision sends it: the extension's flat
// CreateTaskResult and DetailedTask, or 2025-11-25's nested "task".
type wireTask struct {
	ResultType     string                     `json:"resultType"`
	TaskID         string                     `json:"taskId"`
	Status         string                     `json:"status"`
	StatusMessage  string                     `json:"statusMessage"`
	PollIntervalMs *int64                     `json:"pollIntervalMs"`
	PollInterval   *int64                     `json:"pollInterval"` // 2025-11-25
	Task           *wireTask                  `json:"task"`         // 2025-11-25 CreateTaskResult
	Result         json.RawMessage            `json:"result"`
	Error          *wireError                 `json:"error"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests"`
	Content        json.RawMessage            `json:"content"`
}

type wireError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// createdTask reads a tools/call result that is a task, in either shape.
func createdTask(raw json.RawMessage) (wireTask, bool) {
	var w wireTask
	if !mayBeTask(raw) || json.Unmarshal(raw, &w) != nil {
		return wireTask{}, false
	}
	if w.ResultType == "task" && w.TaskID != "" {
		return w, true
	}
	if w.Task != nil && w.Task.TaskID != "" && w.Content == nil {
		return *w.Task, true
	}
	return wireTask{}, false
}

// mayBeTask: a task, in either shape, has "task" as a key or a value; a
// result without those bytes (or any escape that could spell them) is not
// decoded a second time, which every plain result would otherwise be.
func mayBeTask(raw json.RawMessage) bool {
	return len(raw) > 0 && (bytes.Contains(raw, []byte(`"task`)) || bytes.Contains(raw, []byte(`\u`)))
}

func (w wireTask) pollEvery() time.Duration {
	ms := w.PollIntervalMs
	if ms == nil {
		ms = w.PollInterval
	}
	if ms == nil || *ms <= 0 || *ms > int64(tools.TaskPollCeiling/time.Millisecond) {
		if ms != nil && *ms > 0 {
			return tools.TaskPollCeiling
		}
		return 0
	}
	return time.Duration(*ms) * time.Millisecond
}

// PollTask asks the connection's server how its task stands (tasks/get).
// A completed task's result comes back as Parts, the pieces a tools/call
// result gives (CallParts), redacted against the credential values the poll
// used; a tool error is the "ERROR: …" text, as for a call. An input request
// is answered at once with tasks/update, declined or with the form's
// defaults as the catalog row says (ADR 0613): nobody is at hand to fill it.
func (p *Pool) PollTask(ctx context.Context, connectionID, taskID string) (tools.TaskState, error) {
	ctx, used := connectors.WithUsed(ctx)
	st, err := p.pollTask(ctx, connectionID, taskID)
	parts, err := used.Redact(st.Parts, err)
	st.Parts = parts
	if msg, _ := used.Redact([]tools.Part{{Text: st.Message}}, nil); len(msg) == 1 {
		st.Message = msg[0].Text
	}
	return st, err
}

func (p *Pool) pollTask(ctx context.Context, connectionID, taskID string) (tools.TaskState, error) {
	info, err := p.info(ctx, connectionID)
	if err != nil {
		return tools.TaskState{}, err
	}
	var st tools.TaskState
	ctx, span := telemetry.StartMCPRequest(ctx, "tasks/get", "")
	err = p.do(ctx, connectionID, "tasks/get", callTimeout(ctx, info, p.o.CallTimeout), func(ctx context.Context, s *session) error {
		traced(span, s)
		var err error
		st, err = p.taskOnce(ctx, s, taskID)
		return err
	})
	span.End(errorType(err))
	return st, err
}

// taskOnce is one poll of a task on s.
func (p *Pool) taskOnce(ctx context.Context, s *session, taskID string) (tools.TaskState, error) {
	rctx, raw := withRawResult(ctx, string(mcp.MethodTasksGet))
	if _, err := s.c.GetTask(rctx, mcp.GetTaskRequest{Params: mcp.GetTaskParams{TaskId: taskID}}); err != nil {
		return tools.TaskState{}, err
	}
	var w wireTask
	err := json.Unmarshal(raw.get(), &w)
	if err != nil || w.Status == "" {
		return tools.TaskState{}, fmt.Errorf("%s: tasks/get answered without a task status", label(s.info.Slug))
	}
	st := tools.TaskState{Status: w.Status, PollEvery: w.pollEvery(), Message: w.StatusMessage}
	switch w.Status {
	case tools.TaskCompleted:
		result := w.Result
		if len(result) == 0 { // 2025-11-25: the result is fetched with tasks/result
			rctx, kept := withRawResult(ctx, string(mcp.MethodTasksResult))
			if _, err := s.c.TaskResult(rctx, mcp.TaskResultRequest{Params: mcp.TaskResultParams{TaskId: taskID}}); err != nil {
				return tools.TaskState{}, err
			}
			result = kept.get()
		}
		if st.Parts, err = resultParts(s, result); err != nil {
			return tools.TaskState{}, err
		}
	case tools.TaskFailed:
		if w.Error != nil && w.Error.Message != "" {
			st.Message = w.Error.Message
		}
	case tools.TaskInputRequired:
		switch {
		case len(w.InputRequests) > 0:
			if err := p.answerInputs(ctx, s, taskID, w.InputRequests); err != nil {
				return tools.TaskState{}, err
			}
			st.Answered = len(w.InputRequests)
		case w.ResultType == "": // 2025-11-25: its requests come on a tasks/result stream
			result, answered, err := p.resultStream(ctx, s, taskID)
			if err != nil {
				return tools.TaskState{}, err
			}
			st.Answered = answered
			if result != nil {
				st.Status = tools.TaskCompleted
				if st.Parts, err = resultParts(s, result); err != nil {
					return tools.TaskState{}, err
				}
			}
		}
	}
	return st, nil
}

// resultParts reads a task's result as a call's (CallParts); a tool error
// is the "ERROR: …" text.
func resultParts(s *session, result json.RawMessage) ([]tools.Part, error) {
	r, err := mcp.ParseCallToolResult(&result)
	if err != nil {
		return nil, fmt.Errorf("%s: the completed task's result: %w", label(s.info.Slug), err)
	}
	parts := Parts(r)
	if r.IsError {
		parts = []tools.Part{{Text: "ERROR: " + tools.JoinParts(parts, nil)}}
	}
	return parts, nil
}

// answerInputs answers a task's input requests with tasks/update: a form as
// the session's elicitation handler answers it (declined, its defaults, or
// a person's answer from the inbox), any other request declined.
func (p *Pool) answerInputs(ctx context.Context, s *session, taskID string, reqs map[string]json.RawMessage) error {
	answers := map[string]any{}
	for key, raw := range reqs {
		var r struct {
			Method string                `json:"method"`
			Params mcp.ElicitationParams `json:"params"`
		}
		answer := any(map[string]any{"action": "decline"})
		if json.Unmarshal(raw, &r) == nil && r.Method == string(mcp.MethodElicitationCreate) {
			var h interface {
				Elicit(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)
			} = declineElicitation{}
			switch {
			case s.info.AnswerDefaults:
				h = defaultsElicitation{}
			case s.info.AskPerson:
				// The poll activity carries the call's asker: the form
				// waits in the operator's inbox like a call's own.
				h = personElicitation{wait: s.info.InputWait, log: p.log}
			}
			if res, err := h.Elicit(ctx, mcp.ElicitationRequest{Params: r.Params}); err == nil {
				answer = res.ElicitationResponse
			}
		}
		answers[key] = answer
	}
	_, err := p.rawRequest(ctx, s, "tasks/update", map[string]any{"taskId": taskID, "inputResponses": answers})
	return err
}

// CancelTask asks the connection's server to cancel its task (tasks/cancel).
// A task that already ended is no error: the extension acknowledges it too.
func (p *Pool) CancelTask(ctx context.Context, connectionID, taskID string) error {
	ctx, used := connectors.WithUsed(ctx)
	info, err := p.info(ctx, connectionID)
	if err != nil {
		return err
	}
	ctx, span := telemetry.StartMCPRequest(ctx, "tasks/cancel", "")
	err = p.do(ctx, connectionID, "tasks/cancel", or(info.CallTimeout, p.o.CallTimeout), func(ctx context.Context, s *session) error {
		traced(span, s)
		_, err := s.c.CancelTask(ctx, mcp.CancelTaskRequest{Params: mcp.CancelTaskParams{TaskId: taskID}})
		return err
	})
	span.End(errorType(err))
	_, err = used.Redact(nil, err)
	return err
}

// waitTask follows a task where nobody can wait for it durably (the Tools
// view's Test, a one-off client): it polls within the call's timeout, and
// cancels the task when that ends first.
func (p *Pool) waitTask(ctx context.Context, connectionID string, w wireTask, timeout time.Duration) ([]tools.Part, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	every, began := w.pollEvery(), time.Now()
	for {
		t := time.NewTimer(tools.TaskPollInterval(every, time.Since(began)))
		select {
		case <-ctx.Done():
			t.Stop()
			cctx, stop := context.WithTimeout(context.WithoutCancel(ctx), p.o.CallTimeout)
			defer stop()
			if err := p.CancelTask(cctx, connectionID, w.TaskID); err != nil {
				p.log.Warn("mcppool: could not cancel a task", "connection", connectionID, "err", oneLine(err))
			}
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return nil, &TimeoutError{Server: "the MCP server", Op: "the task", After: timeout}
			}
			return nil, ctx.Err()
		case <-t.C:
		}
		st, err := p.pollTask(ctx, connectionID, w.TaskID)
		if err != nil {
			return nil, err
		}
		if parts, done := st.Outcome(); done {
			return parts, nil
		}
		every = st.PollEvery
	}
}

var rawRequestID atomic.Int64

// rawRequest sends a request mcp-go has no method for on the session's
// transport, with the per-request protocol metadata of the stateless
// revision added as the client adds it to its own requests.
func (p *Pool) rawRequest(ctx context.Context, s *session, method string, params map[string]any) (json.RawMessage, error) {
	var header http.Header
	if version := s.c.ProtocolVersion(); mcp.IsModernProtocol(version) {
		params["_meta"] = map[string]any{
			mcp.MetaKeyProtocolVersion:    version,
			mcp.MetaKeyClientCapabilities: s.c.GetClientCapabilities(),
			mcp.MetaKeyClientInfo:         mcp.Implementation{Name: "guilds", Version: "1"},
		}
		encoded, err := json.Marshal(params)
		if err != nil {
			return nil, err
		}
		header = http.Header{}
		for k, v := range mcp.StandardHeaders(version, mcp.MCPMethod(method), encoded) {
			header.Set(k, v)
		}
	}
	res, err := s.c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(fmt.Sprintf("guilds-%s-%d", method, rawRequestID.Add(1))),
		Method:  method, Params: params, Header: header,
	})
	if err != nil {
		return nil, err
	}
	if res.Error != nil {
		return nil, res.Error.AsError()
	}
	return res.Result, nil
}
