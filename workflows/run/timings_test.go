package run_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/interceptor"

	runact "github.com/guilds/guilds/activities/run"
)

// activityTimer is a worker interceptor that appends one line per finished
// activity or local activity to a file (RUNTEST_TIMINGS in a worker
// subprocess): the load harness reads them to split a tool call's latency
// into its parts. It reads the clock in activity code only, never in
// workflow code, so it changes no history.
//
// Line: type local run seq attempt scheduled started completed (unix ns).
// For a local activity, scheduled is when the workflow task handed it to the
// worker's local activity executor; for an activity, when the server
// scheduled its attempt.
type activityTimer struct {
	interceptor.WorkerInterceptorBase
	mu sync.Mutex
	f  *os.File
}

func newActivityTimer(path string) (*activityTimer, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	return &activityTimer{f: f}, nil
}

func (t *activityTimer) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &timedActivity{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, t: t}
}

type timedActivity struct {
	interceptor.ActivityInboundInterceptorBase
	t *activityTimer
}

func (a *timedActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	out, err := a.Next.ExecuteActivity(ctx, in)
	done := time.Now()
	info := activity.GetInfo(ctx)
	runID, seq := "-", 0
	if len(in.Args) > 0 {
		switch v := in.Args[0].(type) {
		case runact.ToolInput:
			runID, seq = v.RunID, v.Seq
		case runact.ModelInput:
			runID, seq = v.RunID, v.Seq
		}
	}
	line := fmt.Sprintf("%s %t %s %d %d %d %d %d\n", info.ActivityType.Name, info.IsLocalActivity, runID, seq, info.Attempt,
		info.ScheduledTime.UnixNano(), info.StartedTime.UnixNano(), done.UnixNano())
	a.t.mu.Lock()
	_, _ = a.t.f.WriteString(line) // one write per line: a killed worker loses at most the line it was writing
	a.t.mu.Unlock()
	return out, err
}
