package run_test

import (
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/workflow"

	runact "github.com/guilds/guilds/activities/run"
)

// fastPathCalls is the number of quick calls of one benchmarked run.
const fastPathCalls = 50

// BenchmarkQuickToolCall runs the same run of 50 quick noop calls, one per
// model turn, on the activity path and on the fast path (local activities),
// side by side on the real dev server and Postgres. p50/p95-wait-µs is what
// the workflow waits for one call: from the workflow code asking for it to
// the result being back in the workflow code, timed in the worker by a
// workflow interceptor, the same way on both paths. On the activity path
// p50-sched-µs is also the history's scheduled → completed time, the figure
// docs/bench/runs.md has tracked so far. µs/call is the whole run's wall time
// per call (one model turn per call included).
func BenchmarkQuickToolCall(b *testing.B) {
	for _, path := range []string{"activity", "fast"} {
		b.Run("path="+path, func(b *testing.B) {
			timer := &callTimer{}
			e := newEnv(b, envOptions{quick: path == "fast", interceptors: []interceptor.WorkerInterceptor{timer}})
			e.model.repeat = func(n int) turn {
				if n >= fastPathCalls {
					return turn{Text: "done"}
				}
				return turn{Calls: []call{{"noop", `{}`}}}
			}
			var sched []time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				e.model.mu.Lock()
				e.model.next = 0
				e.model.mu.Unlock()
				id := e.start("benchmark", 500)
				if _, err := e.wait(id, 10*time.Minute); err != nil {
					b.Fatal(err)
				}
				if path == "activity" {
					b.StopTimer()
					sched = append(sched, toolLatencies(b, e, id)...)
					b.StartTimer()
				}
			}
			b.StopTimer()
			waits := timer.waits()
			if len(waits) != fastPathCalls*b.N {
				b.Fatalf("timed %d calls, want %d", len(waits), fastPathCalls*b.N)
			}
			p50, p95 := percentiles(waits)
			b.ReportMetric(float64(p50.Microseconds()), "p50-wait-µs")
			b.ReportMetric(float64(p95.Microseconds()), "p95-wait-µs")
			if path == "activity" {
				s50, _ := percentiles(sched)
				b.ReportMetric(float64(s50.Microseconds()), "p50-sched-µs")
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*fastPathCalls)/1e3, "µs/call")
		})
	}
}

// callTimer times, in the worker, how long workflow code waits for each tool
// call, scheduled as an activity or as a local activity. It reads the wall
// clock outside any workflow decision, so it changes no command.
type callTimer struct {
	interceptor.WorkerInterceptorBase
	mu  sync.Mutex
	lat []time.Duration
}

func (c *callTimer) add(d time.Duration) {
	c.mu.Lock()
	c.lat = append(c.lat, d)
	c.mu.Unlock()
}

func (c *callTimer) waits() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.lat...)
}

func (c *callTimer) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &timerInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, c: c}
}

type timerInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	c *callTimer
}

func (i *timerInbound) Init(out interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&timerOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: out}, c: i.c})
}

type timerOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	c *callTimer
}

func (o *timerOutbound) ExecuteActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	return o.timed(ctx, typ == runact.ToolName, o.Next.ExecuteActivity(ctx, typ, args...))
}

func (o *timerOutbound) ExecuteLocalActivity(ctx workflow.Context, typ string, args ...any) workflow.Future {
	return o.timed(ctx, typ == runact.ToolLocalName, o.Next.ExecuteLocalActivity(ctx, typ, args...))
}

func (o *timerOutbound) timed(ctx workflow.Context, tool bool, f workflow.Future) workflow.Future {
	if !tool || workflow.IsReplaying(ctx) {
		return f
	}
	return &timedFuture{Future: f, start: time.Now(), c: o.c} //workflowcheck:ignore a measurement, read by no decision
}

// timedFuture records the wait when its result is first read; the run loop
// reads a turn's results in order, and a benchmarked turn has one call.
type timedFuture struct {
	workflow.Future
	start time.Time
	c     *callTimer
	done  bool
}

func (f *timedFuture) Get(ctx workflow.Context, v any) error {
	err := f.Future.Get(ctx, v)
	if !f.done {
		f.done = true
		f.c.add(time.Since(f.start)) //workflowcheck:ignore a measurement, read by no decision
	}
	return err
}
