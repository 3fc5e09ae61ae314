package run

import (
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/tools"
)

// ToolRef is what the workflow knows of an offered tool: enough to choose
// the activity options of a call.
type ToolRef struct {
	Name       string `json:"name"`
	Class      string `json:"class"`
	Idempotent bool   `json:"idempotent,omitempty"`
	// Quick calls run as local activities (docs/adr/0511-fast-path.md).
	Quick bool `json:"quick,omitempty"`
}

// SnapshotInput names the run.
type SnapshotInput struct {
	RunID string `json:"run_id"`
}

// SnapshotOutput is the stored snapshot's id, its tools and the budget.
type SnapshotOutput struct {
	SnapshotID string    `json:"snapshot_id"`
	Tools      []ToolRef `json:"tools"`
	Remaining  int       `json:"remaining"`
}

// ModelInput asks for one model turn whose answer is stored at Seq.
type ModelInput struct {
	RunID string `json:"run_id"`
	Seq   int    `json:"seq"`
	// Final offers no tools: the budget is spent and the model must answer.
	Final bool `json:"final,omitempty"`
}

// ModelOutput is the stored assistant message.
type ModelOutput struct {
	Seq   int                    `json:"seq"`
	Text  string                 `json:"text"`
	Calls []runs.ToolCallRequest `json:"calls,omitempty"`
	// Stopped, set alone, says which budget forbids the turn: nothing was
	// stored and the run ends (budget.go).
	Stopped string `json:"stopped,omitempty"`
}

// ToolInput is one call; its result is stored at Seq.
type ToolInput struct {
	RunID     string `json:"run_id"`
	Seq       int    `json:"seq"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Remaining int    `json:"remaining"` // tool calls left after this one
	// ApprovalID names the approval a person gave this call (ADR 0514).
	ApprovalID string `json:"approval_id,omitempty"`
	// WaitOver says the run waited for the call's suspension until its time
	// and heard no answer: the handler must answer now (tools.WaitOver),
	// whatever the worker's clock says.
	WaitOver bool `json:"wait_over,omitempty"`
}

// ToolOutput is the stamped result.
type ToolOutput struct {
	Seq     int    `json:"seq"`
	Result  string `json:"result"`
	Outcome string `json:"outcome"`
	// Approval is set, and nothing else, when the call did not run because
	// it must wait for a person: nothing was stored for it yet.
	Approval *ApprovalAsk `json:"approval,omitempty"`
	// Suspend is set, and nothing else, when the tool waits for a person
	// and asked to be called again later (tools.Suspend).
	Suspend *tools.Suspension `json:"suspend,omitempty"`
	// Task is set, and nothing else, when the server runs the call as a
	// task (the MCP Tasks extension): nothing was stored yet, and the
	// workflow polls it (TaskPoll).
	Task *tools.RemoteTask `json:"task,omitempty"`
	// Stopped says which budget refused the call; the run ends after
	// this turn (budget.go).
	Stopped string `json:"stopped,omitempty"`
}

// RecordInput stores a result the workflow decided without running the tool.
type RecordInput struct {
	ToolInput
	Outcome string `json:"outcome"` // runs.OutcomeRefused | runs.OutcomeInterrupted | runs.OutcomeDenied
	Message string `json:"message"`
}

// FinishInput ends the run.
type FinishInput struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// StopReason, when set, ends the run completed with this reason and
	// StopMessage stored as its closing message at StopSeq (runs.Stop).
	StopReason  string `json:"stop_reason,omitempty"`
	StopMessage string `json:"stop_message,omitempty"`
	StopSeq     int    `json:"stop_seq,omitempty"`
}
