package run_test

import (
	"context"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/workflows/run"
)

// BenchmarkApprovalToExecution measures, on the dev server and Postgres,
// the time from an operator's answer (the decision written and the run
// signalled) to the approved tool starting (the row its handler writes,
// stamped by Postgres), with a worker up. events-while-waiting is how many
// history events a run adds while it waits (read before the answer, after
// a pause): the wait is one timer, whatever its length.
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
	for i := range b.N {
		e.model.mu.Lock()
		e.model.next = 0
		e.model.mu.Unlock()
		id := e.start("benchmark", 5)
		req := e.pending(id, 1)
		if i == 0 {
			before := historyLength(b, e, id)
			time.Sleep(2 * time.Second) // a figure, not an assertion: the history must not grow while it waits
			waitingEvents = historyLength(b, e, id) - before
		}
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
	}
	p50, p95 := percentiles(lat)
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-answer-to-start-ms")
	b.ReportMetric(float64(p95.Microseconds())/1000, "p95-answer-to-start-ms")
	b.ReportMetric(float64(waitingEvents), "events-while-waiting")
}

func historyLength(b *testing.B, e *env, id string) int64 {
	b.Helper()
	d, err := e.c.DescribeWorkflow(context.Background(), run.WorkflowID(id), "")
	if err != nil {
		b.Fatal(err)
	}
	return d.RawResponse.GetWorkflowExecutionInfo().GetHistoryLength()
}
