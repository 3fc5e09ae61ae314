// Package taskstest is an MCP server that answers tool calls with tasks, on
// the wire of the Tasks extension (SEP-2663, io.modelcontextprotocol/tasks):
// a flat CreateTaskResult (resultType "task", taskId, status, ttlMs,
// pollIntervalMs), tasks/get with the result inlined once completed,
// tasks/update for input requests and tasks/cancel acknowledged with an
// empty result. mcp-go's server serves everything else (discover,
// initialize, tools/list), so the peer is a real one; mcp-go v1.2.1 has no
// server side of the extension itself.
package taskstest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Tools the server lists. Each call of a task tool creates a task; how it
// goes is the test's (Complete, Fail, AskInput), or its After polls.
const (
	ToolSlow  = "slow_compute"   // completes with "computed <label>" after Polls working answers
	ToolFail  = "failing_job"    // fails with a protocol error after Polls working answers
	ToolInput = "confirm_delete" // asks for a confirmation, then completes with the answer
)

// Server is the peer. Its fields are read under mu.
type Server struct {
	*httptest.Server
	// Polls is how many tasks/get answers say "working" before a task ends
	// (set by New, read only after).
	Polls int
	// PollIntervalMs is the interval the server asks for.
	PollIntervalMs int64

	mu      sync.Mutex
	tasks   map[string]*task
	methods []string // every method received, in order
	updates []json.RawMessage
	changed chan struct{} // closed and replaced at every request
	next    int
}

type task struct {
	id, tool, label string
	status          string
	polls           int
	answer          json.RawMessage
}

// New starts the peer, whose tasks answer "working" polls times before
// they end; it closes with the test.
func New(t testing.TB, polls int) *Server {
	s := &Server{Polls: polls, PollIntervalMs: 10, tasks: map[string]*task{}, changed: make(chan struct{})}
	m := server.NewMCPServer("tasks-peer", "1.0.0", server.WithToolCapabilities(false),
		server.WithExtensions(map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}))
	for _, name := range []string{ToolSlow, ToolFail, ToolInput} {
		m.AddTool(mcp.NewTool(name, mcp.WithString("label")),
			func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ran synchronously"), nil // reached only without the extension
			})
	}
	inner := server.NewStreamableHTTPServer(m)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			inner.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params json.RawMessage `json:"params"`
		}
		if json.Unmarshal(body, &req) != nil {
			inner.ServeHTTP(w, r)
			return
		}
		s.note(req.Method)
		result, handled := s.handle(req.Method, req.Params)
		if !handled {
			inner.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var out []byte
		if e, ok := result.(rpcError); ok {
			out, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "error": e})
		} else {
			out, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
		}
		_, _ = w.Write(out)
	}))
	t.Cleanup(s.Close)
	return s
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (s *Server) note(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.methods = append(s.methods, method)
	close(s.changed)
	s.changed = make(chan struct{})
}

// declared reports whether a request's _meta declares the extension
// (the stateless revision sends the client's capabilities on every request).
func declared(params json.RawMessage) bool {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	var caps struct {
		Extensions map[string]json.RawMessage `json:"extensions"`
	}
	if json.Unmarshal(params, &p) != nil || json.Unmarshal(p.Meta["io.modelcontextprotocol/clientCapabilities"], &caps) != nil {
		return false
	}
	_, ok := caps.Extensions["io.modelcontextprotocol/tasks"]
	return ok
}

func (s *Server) handle(method string, params json.RawMessage) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		TaskID    string          `json:"taskId"`
		Responses json.RawMessage `json:"inputResponses"`
	}
	_ = json.Unmarshal(params, &p)
	switch method {
	case "tools/call":
		if !declared(params) {
			return nil, false // the extension was not negotiated: synchronous
		}
		var args struct {
			Label string `json:"label"`
		}
		_ = json.Unmarshal(p.Arguments, &args)
		s.next++
		t := &task{id: fmt.Sprintf("task-%d", s.next), tool: p.Name, label: args.Label, status: "working"}
		s.tasks[t.id] = t
		return s.envelope(t, "task"), true
	case "tasks/get":
		t, ok := s.tasks[p.TaskID]
		if !ok {
			return rpcError{Code: -32602, Message: "unknown task"}, true
		}
		s.advance(t)
		out := s.envelope(t, "complete")
		switch {
		case t.status == "completed" && t.tool == ToolInput:
			out["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "answered " + string(t.answer)}}}
		case t.status == "completed":
			out["result"] = map[string]any{"content": []any{map[string]any{"type": "text", "text": "computed " + t.label}}}
		case t.status == "failed":
			out["error"] = rpcError{Code: -32603, Message: "the job crashed"}
		case t.status == "input_required":
			out["inputRequests"] = map[string]any{"confirm": map[string]any{"method": "elicitation/create",
				"params": map[string]any{"message": "Delete the file?", "requestedSchema": map[string]any{"type": "object",
					"properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}, "required": []string{"confirm"}}}}}
		}
		return out, true
	case "tasks/update":
		t, ok := s.tasks[p.TaskID]
		if !ok {
			return rpcError{Code: -32602, Message: "unknown task"}, true
		}
		s.updates = append(s.updates, p.Responses)
		var answers map[string]json.RawMessage
		_ = json.Unmarshal(p.Responses, &answers)
		if a, ok := answers["confirm"]; ok && t.status == "input_required" {
			t.answer, t.status = a, "completed"
		}
		return map[string]any{"resultType": "complete"}, true
	case "tasks/cancel":
		t, ok := s.tasks[p.TaskID]
		if !ok {
			return rpcError{Code: -32602, Message: "unknown task"}, true
		}
		if t.status == "working" || t.status == "input_required" {
			t.status = "cancelled"
		}
		return map[string]any{"resultType": "complete"}, true
	}
	return nil, false
}

// advance moves a task on at each poll: after Polls working answers a slow
// task completes, a failing one fails, an input one asks.
func (s *Server) advance(t *task) {
	if t.status != "working" {
		return
	}
	t.polls++
	if t.polls <= s.Polls {
		return
	}
	switch t.tool {
	case ToolSlow:
		t.status = "completed"
	case ToolFail:
		t.status = "failed"
	case ToolInput:
		t.status = "input_required"
	}
}

func (s *Server) envelope(t *task, resultType string) map[string]any {
	now := time.Now().UTC().Format(time.RFC3339)
	return map[string]any{"resultType": resultType, "taskId": t.id, "status": t.status, "createdAt": now,
		"lastUpdatedAt": now, "ttlMs": 600000, "pollIntervalMs": s.PollIntervalMs}
}

// Complete ends a working task as its After polls would, at once.
func (s *Server) Complete(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tasks[id]; ok && t.status == "working" && t.tool == ToolSlow {
		t.status = "completed"
	}
}

// Status is a task's status at the server ("" for none).
func (s *Server) Status(id string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.tasks[id]; ok {
		return t.status
	}
	return ""
}

// Count is how many requests of method the server received.
func (s *Server) Count(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, m := range s.methods {
		if m == method {
			n++
		}
	}
	return n
}

// Updates are the inputResponses of every tasks/update received.
func (s *Server) Updates() []json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]json.RawMessage(nil), s.updates...)
}

// WaitFor returns once cond holds, checked at every request the server
// receives; it fails the test after a wide bound.
func (s *Server) WaitFor(t testing.TB, what string, cond func(*Server) bool) {
	t.Helper()
	bound := time.After(60 * time.Second)
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond(s) {
			return
		}
		select {
		case <-ch:
		case <-bound:
			t.Fatalf("the tasks peer never saw %s", what)
		}
	}
}

// Done reports whether a task ended at the server.
func (s *Server) Done(id string) bool {
	switch s.Status(id) {
	case "completed", "failed", "cancelled":
		return true
	}
	return false
}
