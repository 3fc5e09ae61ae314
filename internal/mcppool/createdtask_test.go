package mcppool

import (
	"encoding/json"
	"testing"
)

// A result is decoded for a task only when it may be one, and every shape of
// a task, an escaped one included, still is.
func TestCreatedTaskSkipsOnlyPlainResults(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want string // the task's id, "" for none
	}{
		{`{"content":[{"type":"text","text":"echo: x"}]}`, ""},
		{`{"content":[{"type":"text","text":"a \"task\" word"}]}`, ""},
		{`{"resultType":"task","taskId":"t1","status":"working"}`, "t1"},
		{`{"resultType": "task", "taskId": "t2"}`, "t2"},
		{`{"task":{"taskId":"t3","status":"working"}}`, "t3"},
		{`{"resultType":"\u0074ask","taskId":"t4"}`, "t4"},
		{`{"\u0074ask":{"taskId":"t5"}}`, "t5"},
	} {
		w, ok := createdTask(json.RawMessage(c.raw))
		if got := map[bool]string{true: w.TaskID}[ok]; got != c.want {
			t.Errorf("%s: task %q, want %q", c.raw, got, c.want)
		}
	}
}
