package run

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"

	"github.com/guilds/guilds/internal/mcppool"
)

// A remote call's progress rides on the tool activity's heartbeats, numbers
// only, and a call with no progress heartbeats without details.
func TestProgressRidesOnTheHeartbeats(t *testing.T) {
	var s testsuite.WorkflowTestSuite
	env := s.NewTestActivityEnvironment()
	var mu sync.Mutex
	var got []CallProgress
	empty := 0
	env.SetOnActivityHeartbeatListener(func(_ *activity.Info, d converter.EncodedValues) {
		mu.Lock()
		defer mu.Unlock()
		var p CallProgress
		if !d.HasValues() {
			empty++
			return
		}
		if err := d.Get(&p); err != nil {
			t.Errorf("heartbeat details: %v", err)
		}
		got = append(got, p)
	})
	a := &Activities{d: Deps{Heartbeat: time.Hour}}
	env.RegisterActivityWithOptions(func(ctx context.Context) error {
		ctx, stop := a.watchProgress(ctx)
		defer stop()
		report := mcppool.ProgressFrom(ctx)
		if report == nil {
			t.Error("the tool call asks for no progress")
			return nil
		}
		report(1, 4)
		report(2, 4)
		return nil
	}, activity.RegisterOptions{Name: "progress"})
	if _, err := env.ExecuteActivity("progress"); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// The SDK throttles heartbeats: the first step goes out at once, a
	// later one with the next heartbeat the throttle lets through.
	if len(got) == 0 || got[0] != (CallProgress{Progress: 1, Total: 4}) {
		t.Fatalf("heartbeats carried %v, want the first step at once", got)
	}
	var note progressNote
	note.set(2, 4)
	if d := note.details(); len(d) != 1 || d[0] != (CallProgress{Progress: 2, Total: 4}) {
		t.Fatalf("the periodic heartbeat would carry %v, want the last step", d)
	}
	var none progressNote
	if d := none.details(); d != nil {
		t.Fatalf("a call without progress heartbeats with %v", d)
	}
}
