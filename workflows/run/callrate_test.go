package run_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	sdkworker "go.temporal.io/sdk/worker"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/callrate"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/workflows/run"
)

// A run whose organisation may make 3 tool calls a minute asks for 4 in one
// turn: three run, the fourth is stored refused with when to retry, and the
// run goes on to its answer.
func TestRunRefusedPastItsOrganisationsRate(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{noWorker: true})
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:6379", DB: 5})
	t.Cleanup(func() { _ = rdb.Close() })
	a, closeMCP := activitiesWith(e.db, e.gate, e.model.URL, e.mcpURL, "", slog.New(slog.DiscardHandler), false, func(d *runact.Deps) {
		d.CallRate = callrate.NewLimiter(rdb, nil)
	})
	w := sdkworker.New(e.c, e.queue, sdkworker.Options{})
	run.Register(w, a)
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Stop(); closeMCP() })
	three := 3
	if _, err := callrate.Set(context.Background(), e.db, e.org, callrate.SettingsInput{ToolCallsPerMinute: &three}); err != nil {
		t.Fatal(err)
	}

	noop := call{"noop", `{}`}
	e.model.script = []turn{{Calls: []call{noop, noop, noop, noop}}, {Text: "done"}}
	id := e.start("four calls", 10)
	res, err := e.wait(id, 2*time.Minute)
	if err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("run: %+v %v", res, err)
	}
	tr := transcript(t, e, id)
	outcomes := map[string]int{}
	for _, tc := range tr.ToolCalls {
		outcomes[tc.Outcome]++
		if tc.Outcome == runs.OutcomeRefused &&
			!strings.Contains(tc.Result, "rate limit of 3 calls a minute for this organisation reached; retry after") {
			t.Fatalf("refused call: %q", tc.Result)
		}
	}
	if outcomes[runs.OutcomeOK] != 3 || outcomes[runs.OutcomeRefused] != 1 {
		t.Fatalf("outcomes %v, want 3 ok and 1 refused", outcomes)
	}
	if n := e.count(`SELECT count(*) FROM audit_events WHERE run_id = $1 AND outcome = 'refused'`, id); n != 1 {
		t.Fatalf("%d refused calls audited, want 1", n)
	}
}
