package run_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/callrate"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/internal/tools"
)

func testRedis(t testing.TB) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL("redis://127.0.0.1:6379/5")
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

// noopRegistry holds one quick native tool that answers at once.
func noopRegistry() *tools.Registry {
	reg := tools.NewRegistry(tools.WithLogger(slog.New(slog.DiscardHandler)))
	reg.Register(tools.Tool{Name: "noop", Description: "Does nothing.", Schema: json.RawMessage(`{"type":"object"}`),
		Idempotent: true, Quick: true, Handler: func(context.Context, tools.Call) (string, error) { return "done", nil }})
	return reg
}

func setRate(t testing.TB, g *guardedRun, n int) {
	t.Helper()
	if _, err := callrate.Set(context.Background(), g.db, g.org, callrate.SettingsInput{ToolCallsPerMinute: &n}); err != nil {
		t.Fatal(err)
	}
}

// A limit of 3 calls a minute: the fourth call is refused with when to
// retry, audited as refused, and nothing ran; another organisation's run on
// another worker (its own limiter on the same Redis) is not affected, and the
// organisation calls again once the wait is over.
func TestCallRateRefusesTheFourthCall(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	rdb := testRedis(t)
	clock := &testClock{t: time.Now()}
	ran := 0
	reg := noopRegistry()
	reg.Register(tools.Tool{Name: "count", Description: "Counts.", Schema: json.RawMessage(`{"type":"object"}`),
		Handler: func(context.Context, tools.Call) (string, error) { ran++; return "counted", nil }})
	noisy := newGuardedRun(t, db, "", runact.Deps{Tools: reg, CallRate: callrate.NewLimiter(rdb, clock.now)})
	quiet := newGuardedRun(t, db, "", runact.Deps{Tools: noopRegistry(), CallRate: callrate.NewLimiter(rdb, clock.now)})
	setRate(t, noisy, 3)
	setRate(t, quiet, 3)

	for i := 0; i < 3; i++ {
		if out := noisy.call(t, "count", `{}`); out.Outcome != runs.OutcomeOK {
			t.Fatalf("call %d: %s %q", i+1, out.Outcome, out.Result)
		}
	}
	out := noisy.call(t, "count", `{}`)
	if out.Outcome != runs.OutcomeRefused ||
		!strings.Contains(out.Result, "rate limit of 3 calls a minute for this organisation reached; retry after 20 s") {
		t.Fatalf("fourth call: %s %q", out.Outcome, out.Result)
	}
	if ran != 3 {
		t.Fatalf("the tool ran %d times, want 3", ran)
	}
	if got := noisy.auditOutcome(t, noisy.seq); got != runs.OutcomeRefused {
		t.Fatalf("audit outcome %q, want refused", got)
	}
	for i := 0; i < 3; i++ {
		if out := quiet.call(t, "noop", `{}`); out.Outcome != runs.OutcomeOK {
			t.Fatalf("the other organisation's call %d: %s %q", i+1, out.Outcome, out.Result)
		}
	}
	clock.add(20 * time.Second)
	if out := noisy.call(t, "count", `{}`); out.Outcome != runs.OutcomeOK {
		t.Fatalf("after the wait: %s %q", out.Outcome, out.Result)
	}
}

// No limit set (the default) refuses nothing.
func TestCallRateUnlimitedByDefault(t *testing.T) {
	t.Parallel()
	db := testdb.New(t)
	g := newGuardedRun(t, db, "", runact.Deps{Tools: noopRegistry(), CallRate: callrate.NewLimiter(testRedis(t), nil)})
	for i := 0; i < 20; i++ {
		if out := g.call(t, "noop", `{}`); out.Outcome != runs.OutcomeOK {
			t.Fatalf("call %d: %s %q", i+1, out.Outcome, out.Result)
		}
	}
}
