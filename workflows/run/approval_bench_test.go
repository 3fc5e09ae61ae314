package run_test

import (
	"context"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/workflows/run"
)

// BenchmarkApprovalToExecution measures, on the dev server and Postgres,
// the time from an operator's answer (the decision written and the run
// signalled) to the approved tool starting (the row its handler writes,
// stamped by Postgres), with a worker up. events-while-waiting is how many
// history events a run recorded between starting the wait's timer and the
// answer's signal, read from the finished history: the wait is one timer,
// whatever its length.
func BenchmarkApprovalToExecution(b *testing.B) {
	gate := &askGate{version: "p1:one"}
	e := newEnv(b, envOptions{approvals: gate})
	e.model.repeat = func(n int) turn {
		if n%2 == 0 {
			return turn{Calls: []call{{"side_effect", `{}`}}}
		}
		return turn{Text: "done"}
	}
	ctx := context.Background()
	var lat []time.Duration
	var waitingEvents int64
	b.ReportAllocs()
	for range b.N {
		e.model.mu.Lock()
		e.model.next = 0
		e.model.mu.Unlock()
		id := e.start("benchmark", 5)
		req := e.pending(id, 1)
		t0 := time.Now()
		e.decide(id, req.ID, approvals.Decision{Approve: true, UserName: "bench"})
		if _, err := e.wait(id, 2*time.Minute); err != nil {
			b.Fatal(err)
		}
		var at time.Time
		if err := e.db.QueryRow(ctx, `SELECT at FROM test_executions WHERE run_id = $1`, id).Scan(&at); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, at.Sub(t0))
		waitingEvents = max(waitingEvents, eventsWhileWaiting(b, e, id))
	}
	p50, p95 := percentiles(lat)
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-answer-to-start-ms")
	b.ReportMetric(float64(p95.Microseconds())/1000, "p95-answer-to-start-ms")
	b.ReportMetric(float64(waitingEvents), "events-while-waiting")
}

// eventsWhileWaiting counts the events between the wait's timer starting
// and the answer's signal arriving.
func eventsWhileWaiting(b *testing.B, e *env, id string) int64 {
	b.Helper()
	it := e.c.GetWorkflowHistory(context.Background(), run.WorkflowID(id), "", false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	var timer, signal int64
	for it.HasNext() {
		ev, err := it.Next()
		if err != nil {
			b.Fatal(err)
		}
		switch ev.GetEventType() {
		case enums.EVENT_TYPE_TIMER_STARTED:
			if timer == 0 {
				timer = ev.GetEventId()
			}
		case enums.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
			if signal == 0 {
				signal = ev.GetEventId()
			}
		}
	}
	if signal == 0 {
		b.Fatal("the history holds no answer's signal")
	}
	if timer == 0 || signal < timer {
		return 0 // the answer came before the wait began
	}
	return signal - timer - 1
}
