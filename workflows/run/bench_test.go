package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/guilds/guilds/internal/tools"
	"github.com/guilds/guilds/workflows/run"
)

// benchCalls is the number of tool calls of one benchmarked run.
const benchCalls = 200

// BenchmarkRunToolCalls runs whole runs of 200 trivial tool calls from the
// scripted model, 1 or 10 calls per model turn, on the real Temporal dev
// server and Postgres. ns/op is one whole run. p50/p95-tool-µs is the time
// from a tool activity being scheduled to its completion being recorded,
// read from the workflow histories: the activity path's cost per call.
func BenchmarkRunToolCalls(b *testing.B) {
	for _, perTurn := range []int{1, 10} {
		b.Run(fmt.Sprintf("per-turn=%d", perTurn), func(b *testing.B) {
			e := newEnv(b, envOptions{})
			e.model.repeat = func(n int) turn {
				if n*perTurn >= benchCalls {
					return turn{Text: "done"}
				}
				calls := make([]call, perTurn)
				for i := range calls {
					calls[i] = call{"noop", `{}`}
				}
				return turn{Calls: calls}
			}
			var lat []time.Duration
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
				b.StopTimer()
				lat = append(lat, toolLatencies(b, e, id)...)
				b.StartTimer()
			}
			b.StopTimer()
			if len(lat) != benchCalls*b.N {
				b.Fatalf("measured %d tool activities, want %d", len(lat), benchCalls*b.N)
			}
			p50, p95 := percentiles(lat)
			b.ReportMetric(float64(p50.Microseconds()), "p50-tool-µs")
			b.ReportMetric(float64(p95.Microseconds()), "p95-tool-µs")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*benchCalls)/1e3, "µs/call")
		})
	}
}

// BenchmarkToolCallDirect calls the same handler without Temporal: argument
// check, handler and the result pipeline, as the tool activity does inside.
func BenchmarkToolCallDirect(b *testing.B) {
	reg := testRegistry(nil, b.TempDir(), slog.New(slog.DiscardHandler))
	ctx := context.Background()
	c := tools.Call{Name: "noop", Args: json.RawMessage(`{}`), RunID: "r"}
	lat := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		out := tools.Stamp(reg.Invoke(ctx, c), tools.StampOptions{Remaining: i % 50})
		lat = append(lat, time.Since(start))
		if out == "" {
			b.Fatal("empty result")
		}
	}
	b.StopTimer()
	p50, p95 := percentiles(lat)
	b.ReportMetric(float64(p50.Nanoseconds())/1e3, "p50-tool-µs")
	b.ReportMetric(float64(p95.Nanoseconds())/1e3, "p95-tool-µs")
}

// toolLatencies reads scheduled→completed times of the run's tool
// activities over every execution of its continue-as-new chain.
func toolLatencies(b *testing.B, e *env, id string) []time.Duration {
	ctx := context.Background()
	desc, err := e.c.DescribeWorkflow(ctx, run.WorkflowID(id), "")
	if err != nil {
		b.Fatal(err)
	}
	var out []time.Duration
	runID := desc.RawResponse.WorkflowExecutionInfo.GetFirstRunId()
	for runID != "" {
		next := ""
		scheduled := map[int64]time.Time{}
		it := e.c.GetWorkflowHistory(ctx, run.WorkflowID(id), runID, false, enums.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				b.Fatal(err)
			}
			switch ev.GetEventType() {
			case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == "tool" {
					scheduled[ev.GetEventId()] = ev.GetEventTime().AsTime()
				}
			case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
				if at, ok := scheduled[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()]; ok {
					out = append(out, ev.GetEventTime().AsTime().Sub(at))
				}
			case enums.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW:
				next = ev.GetWorkflowExecutionContinuedAsNewEventAttributes().GetNewExecutionRunId()
			}
		}
		runID = next
	}
	return out
}

func percentiles(d []time.Duration) (p50, p95 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)*50/100], s[min(len(s)*95/100, len(s)-1)]
}
