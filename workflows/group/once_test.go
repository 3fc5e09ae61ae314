package group_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/groupchat"
	"github.com/guilds/guilds/workflows/group"
)

// A worker that stops while the routing model is deciding does not lose the
// message or route it twice: another worker decides again (the first
// decision was never stored), each recipient gets one run, and starting
// the message's routing again changes nothing.
func TestRoutingOnceAcrossAWorkerLostMidDecision(t *testing.T) {
	rm := newRouter(t, func(n int, _ map[string]any) (int, string) {
		switch n {
		case 0:
			return 0, "" // hangs until the worker goes away
		case 1:
			return 200, `{"recipients":["alice","bob"],"history":5}`
		}
		return 200, `{"recipients":[],"history":1}` // the answers
	})
	e := newEnv(t, envOptions{noWorker: true}, text, "alice", "bob")
	opts := envOptions{router: rm.router(time.Minute)}
	stop := e.startWorker(opts)
	m := e.post("@alice @bob who takes the incident?")
	eventually(t, time.Minute, "the routing model's first call", func() bool { return rm.calls.Load() == 1 })
	stop()
	if n := e.count(`SELECT count(*) FROM group_routes`); n != 0 {
		t.Fatalf("a decision was stored by the stopped worker: %d", n)
	}
	e.startWorker(opts)
	msgs := e.settle()
	if got := strings.Join(authors(msgs), ","); got != "Dana,alice,bob" && got != "Dana,bob,alice" {
		t.Fatalf("chat: %s", got)
	}
	if r := msgs[0].Route; r == nil || r.Method != groupchat.MethodRouter || len(r.Recipients) != 2 {
		t.Fatalf("route: %+v", msgs[0].Route)
	}
	if rm.calls.Load() != 4 { // the hung call, its retry, and one per answer
		t.Errorf("the routing model was asked %d times", rm.calls.Load())
	}
	before, err := e.c.DescribeWorkflow(context.Background(), group.WorkflowID(m.ID), "")
	if err != nil {
		t.Fatal(err)
	}
	if err := e.svc.StartRoute(context.Background(), m); err != nil {
		t.Fatalf("starting the routing again: %v", err)
	}
	after, err := e.c.DescribeWorkflow(context.Background(), group.WorkflowID(m.ID), "")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := after.RawResponse.WorkflowExecutionInfo.Execution.RunId, before.RawResponse.WorkflowExecutionInfo.Execution.RunId; a != b {
		t.Errorf("a second routing started (%s after %s)", a, b)
	}
	if n := e.count(`SELECT count(*) FROM runs WHERE trigger = 'group'`); n != 2 {
		t.Errorf("%d group runs, want 2", n)
	}
	if n := e.count(`SELECT count(*) FROM group_deliveries`); n != 2 {
		t.Errorf("%d deliveries, want 2", n)
	}
	if n := e.count(`SELECT count(*) FROM group_messages`); n != 3 {
		t.Errorf("%d messages, want 3", n)
	}
}
