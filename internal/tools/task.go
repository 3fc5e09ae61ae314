package tools

import (
	"context"
	"strings"
	"sync"
	"time"
)

// A remote MCP server may answer a tool call with a task (the MCP Tasks
// extension) instead of a result: the work goes on at the server, and the
// client polls for it. A run does not poll inside its call: the pool hands
// the task over, the call's activity returns it, and the run workflow polls
// on durable timers, holding no worker (docs/adr/0625).

// RemoteTask is a task a server created for a call. It crosses the workflow
// history, so it holds ids only: which login's session to ask, and the
// server's id for the task.
type RemoteTask struct {
	ConnectionID string `json:"connection_id"`
	TaskID       string `json:"task_id"`
	// PollEvery is the interval the server asked for (0: none given).
	PollEvery time.Duration `json:"poll_every,omitempty"`
	// Started is when the call that created the task began.
	Started time.Time `json:"started"`
}

// Poll interval bounds. A server's pollIntervalMs is honoured between a
// floor and a ceiling that both grow with the time already waited (a
// sixtieth of it): a task that runs for hours is not polled every second,
// which would cost a run's history some ten events a poll, and its result
// waits at most a sixtieth of the time already spent before it is fetched.
const (
	// TaskPollFloor keeps a server asking for 0 ms from being polled in a loop.
	TaskPollFloor = time.Second
	// TaskPollCeiling is the longest wait between polls early on.
	TaskPollCeiling = time.Minute
	// TaskPollDefault is the interval when the server gives none.
	TaskPollDefault = 2 * time.Second
	// TaskPollMax caps the growth: a day-long task is polled every 10 min.
	TaskPollMax = 10 * time.Minute
)

// TaskPollInterval is the wait before the next poll of a task whose server
// asked for asked (0: it did not say), after waited so far. It is pure:
// the run workflow calls it.
func TaskPollInterval(asked, waited time.Duration) time.Duration {
	grown := min(waited/60, TaskPollMax)
	floor, ceiling := max(TaskPollFloor, grown), max(TaskPollCeiling, grown)
	if asked <= 0 {
		asked = TaskPollDefault
	}
	return min(max(asked, floor), ceiling)
}

// Task states, as the extension names them.
const (
	TaskWorking       = "working"
	TaskInputRequired = "input_required"
	TaskCompleted     = "completed"
	TaskFailed        = "failed"
	TaskCancelled     = "cancelled"
)

// TaskTerminal reports whether a task in state s has ended.
func TaskTerminal(s string) bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// TaskState is how a task stands at one poll. Parts is its result once
// completed; a failed or cancelled task has none, and Message says why.
type TaskState struct {
	Status    string
	PollEvery time.Duration
	Message   string
	Parts     []Part
	// Answered counts the input requests of an input_required task the
	// client answered (declined, or with the form's defaults) at this poll.
	Answered int
}

type taskKey struct{}

type taskSlot struct {
	mu sync.Mutex
	t  *RemoteTask
}

// WithTaskHandOver returns a context in which a caller may hand over a task
// a server created, and a function that returns the task handed over (nil
// when none).
func WithTaskHandOver(ctx context.Context) (context.Context, func() *RemoteTask) {
	slot := &taskSlot{}
	return context.WithValue(ctx, taskKey{}, slot), func() *RemoteTask {
		slot.mu.Lock()
		defer slot.mu.Unlock()
		return slot.t
	}
}

// HandOverTask gives the task to whoever made ctx with WithTaskHandOver. It
// reports false where nobody can wait for it durably (the Tools view's Test,
// a one-off client): the caller then waits for the task itself.
func HandOverTask(ctx context.Context, t RemoteTask) bool {
	slot, ok := ctx.Value(taskKey{}).(*taskSlot)
	if !ok {
		return false
	}
	slot.mu.Lock()
	defer slot.mu.Unlock()
	slot.t = &t
	return true
}

// Outcome is the result of a task that ended, as a call's result reads: its
// own parts when completed, an "ERROR: " text when it failed or the server
// cancelled it. done is false while it runs.
func (st TaskState) Outcome() (parts []Part, done bool) {
	switch st.Status {
	case TaskCompleted:
		return st.Parts, true
	case TaskFailed:
		return []Part{{Text: ErrorResult("the server's task for this call failed" + because(st.Message))}}, true
	case TaskCancelled:
		return []Part{{Text: ErrorResult("the server cancelled its task for this call" + because(st.Message))}}, true
	}
	return nil, false
}

func because(msg string) string {
	msg = strings.TrimSpace(msg)
	if msg == "" {
		return ""
	}
	return ": " + msg
}
