package mcppool_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guilds/guilds/internal/inputs"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/mcppool/taskstest"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

// tasksPool is a pool with one login of a tasks peer.
func tasksPool(t *testing.T) (*mcppool.Pool, *taskstest.Server, string) {
	t.Helper()
	peer := taskstest.New(t, 2)
	db := testdb.New(t)
	id := addConnection(t, db, "tasks", peer.URL, "none", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{}})
	t.Cleanup(p.Close)
	return p, peer, id
}

// A caller that can wait durably gets the task, not a result; polls follow
// it to its result, which reads as a call's.
func TestTaskHandedOverAndPolled(t *testing.T) {
	ctx := context.Background()
	p, peer, id := tasksPool(t)
	hctx, handed := tools.WithTaskHandOver(ctx)
	parts, err := p.CallParts(hctx, id, taskstest.ToolSlow, []byte(`{"label":"x"}`))
	if err != nil || len(parts) != 0 {
		t.Fatalf("a task's call = %+v, %v; want nothing yet", parts, err)
	}
	task := handed()
	if task == nil || task.ConnectionID != id || task.TaskID == "" || task.PollEvery <= 0 {
		t.Fatalf("handed over %+v", task)
	}
	var st tools.TaskState
	for i := 0; ; i++ {
		if st, err = p.PollTask(ctx, id, task.TaskID); err != nil {
			t.Fatal(err)
		}
		if tools.TaskTerminal(st.Status) {
			break
		}
		if i > peer.Polls {
			t.Fatalf("still %s after %d polls", st.Status, i+1)
		}
	}
	out, done := st.Outcome()
	if !done || tools.JoinParts(out, nil) != "computed x" {
		t.Fatalf("result %+v (done %v)", out, done)
	}
	if n := peer.Count("tasks/get"); n != peer.Polls+1 {
		t.Errorf("tasks/get sent %d times, want %d", n, peer.Polls+1)
	}
}

// Where nobody can wait durably (the Tools view's Test), the pool follows
// the task itself within the call's timeout.
func TestTaskWaitedInline(t *testing.T) {
	p, peer, id := tasksPool(t)
	got, err := p.Call(context.Background(), id, taskstest.ToolSlow, []byte(`{"label":"inline"}`))
	if err != nil || got != "computed inline" {
		t.Fatalf("Call = %q, %v", got, err)
	}
	got, err = p.Call(context.Background(), id, taskstest.ToolFail, nil)
	if err != nil || got != "ERROR: the server's task for this call failed: the job crashed" {
		t.Fatalf("a failed task = %q, %v", got, err)
	}
	if peer.Count("tasks/cancel") != 0 {
		t.Error("a task that ended was cancelled")
	}
}

// An input request is answered at once (declined: nobody is at hand), and
// cancelling a task reaches its server.
func TestTaskInputDeclinedAndCancel(t *testing.T) {
	ctx := context.Background()
	p, peer, id := tasksPool(t)
	hctx, handed := tools.WithTaskHandOver(ctx)
	if _, err := p.CallParts(hctx, id, taskstest.ToolInput, nil); err != nil {
		t.Fatal(err)
	}
	task := handed()
	answered := 0
	for !peer.Done(task.TaskID) {
		st, err := p.PollTask(ctx, id, task.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		answered += st.Answered
	}
	if answered != 1 || len(peer.Updates()) != 1 || !strings.Contains(string(peer.Updates()[0]), `"decline"`) {
		t.Fatalf("answered %d, updates %s", answered, peer.Updates())
	}

	hctx, handed = tools.WithTaskHandOver(ctx)
	if _, err := p.CallParts(hctx, id, taskstest.ToolSlow, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.CancelTask(ctx, id, handed().TaskID); err != nil {
		t.Fatal(err)
	}
	if got := peer.Status(handed().TaskID); got != tools.TaskCancelled {
		t.Fatalf("after tasks/cancel the task is %q", got)
	}
	st, err := p.PollTask(ctx, id, handed().TaskID)
	if out, _ := st.Outcome(); err != nil || tools.JoinParts(out, nil) != "ERROR: the server cancelled its task for this call" {
		t.Fatalf("a cancelled task reads %+v, %v", out, err)
	}
}

// BenchmarkTaskPoll is one poll of a running task through the pool
// (tasks/get on an open session, the raw result read, the state decoded):
// what each durable timer of a run following a task costs the worker.
func BenchmarkTaskPoll(b *testing.B) {
	ctx := context.Background()
	peer := taskstest.New(b, 1<<30) // never ends
	db := testdb.New(b)
	id := addConnection(b, db, "tasks", peer.URL, "none", `{}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{}})
	b.Cleanup(p.Close)
	hctx, handed := tools.WithTaskHandOver(ctx)
	if _, err := p.CallParts(hctx, id, taskstest.ToolSlow, nil); err != nil {
		b.Fatal(err)
	}
	task := handed().TaskID
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		st, err := p.PollTask(ctx, id, task)
		if err != nil || st.Status != tools.TaskWorking {
			b.Fatalf("%+v %v", st, err)
		}
	}
}

// A task's form on a row that sends forms to a person waits in the inbox
// like a call's own, and the operator's answer reaches the server with
// tasks/update.
func TestTaskInputGoesToAPerson(t *testing.T) {
	ctx := context.Background()
	peer := taskstest.New(t, 2)
	db := testdb.New(t)
	id := addConnection(t, db, "tasks", peer.URL, "none", `{"elicitation":"person"}`)
	p := mcppool.New(mcppool.Options{DB: db, Credentials: &creds{}})
	t.Cleanup(p.Close)
	hctx, handed := tools.WithTaskHandOver(ctx)
	if _, err := p.CallParts(hctx, id, taskstest.ToolInput, nil); err != nil {
		t.Fatal(err)
	}
	task := handed()
	asker, asked := asking(db, runPlace(t, db))
	polled := make(chan error, 1)
	go func() {
		for !peer.Done(task.TaskID) {
			if _, err := p.PollTask(inputs.WithAsker(ctx, asker), id, task.TaskID); err != nil {
				polled <- err
				return
			}
		}
		polled <- nil
	}()
	r := answer(t, db, asked, inputs.Answer{Action: inputs.ActionAccept, Content: map[string]any{"confirm": true}})
	if r.Message != "Delete the file?" {
		t.Fatalf("the inbox shows %+v", r)
	}
	if err := <-polled; err != nil {
		t.Fatal(err)
	}
	if u := peer.Updates(); len(u) != 1 || !strings.Contains(string(u[0]), `"accept"`) || !strings.Contains(string(u[0]), `"confirm":true`) {
		t.Fatalf("tasks/update carried %s", u)
	}
}
