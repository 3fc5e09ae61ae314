package run_test

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/config"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/store"
	"github.com/guilds/guilds/internal/testtemporal"
	"github.com/guilds/guilds/workflows/run"
)

// workerProcess is the body of a worker subprocess (see TestMain): it runs
// the run workflow on the queue and database named in its environment until
// it is killed.
func workerProcess() int {
	get := os.Getenv
	ctx := context.Background()
	// Pooled as guilds worker pools (GUILDS_DB_MAX_CONNS, else the store's size).
	cfg, err := config.Load(nil)
	if err != nil {
		return 2
	}
	cfg.DatabaseURL = get("RUNTEST_DB")
	db, err := store.Open(ctx, cfg.PoolURL())
	if err != nil {
		return 2
	}
	c, err := client.Dial(client.Options{HostPort: get("RUNTEST_TEMPORAL"), Namespace: "default"})
	if err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	a, _ := activitiesWith(db, get("RUNTEST_GATE"), get("RUNTEST_MODEL"), get("RUNTEST_MCP"), get("RUNTEST_ADAPTER"), log,
		get("RUNTEST_QUICK") == "1")
	opts := workerOptions(cfg)
	if path := get("RUNTEST_TIMINGS"); path != "" {
		timer, err := newActivityTimer(path)
		if err != nil {
			return 2
		}
		opts.Interceptors = append(opts.Interceptors, timer)
	}
	w := sdkworker.New(c, get("RUNTEST_QUEUE"), opts)
	run.Register(w, a)
	if err := w.Run(sdkworker.InterruptCh()); err != nil {
		return 1
	}
	return 0
}

// workerOptions sizes a worker subprocess as guilds worker is sized
// (GUILDS_WORKER_*, their defaults when unset).
func workerOptions(cfg config.Config) sdkworker.Options {
	w := cfg.Worker
	return sdkworker.Options{MaxConcurrentActivityExecutionSize: w.MaxActivities,
		MaxConcurrentLocalActivityExecutionSize: w.MaxActivities, MaxConcurrentWorkflowTaskExecutionSize: w.MaxWorkflowTasks,
		MaxConcurrentActivityTaskPollers: w.ActivityPollers, MaxConcurrentWorkflowTaskPollers: w.WorkflowPollers}
}

func (e *env) spawnWorker(t *testing.T, extraEnv ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), extraEnv...), "GUILDS_RUN_TEST_WORKER=1",
		"RUNTEST_DB="+e.dbURL, "RUNTEST_TEMPORAL="+testtemporal.Address(t),
		"RUNTEST_QUEUE="+e.queue, "RUNTEST_GATE="+e.gate, "RUNTEST_MODEL="+e.model.URL, "RUNTEST_MCP="+e.mcpURL)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd
}

// A worker killed with SIGKILL in the middle of a tool call: a new worker
// process takes the run over and completes it. Every call is in the
// transcript exactly once, the call that was cut off is recorded as
// interrupted and not repeated (it is not idempotent), and no side-effecting
// call ran twice.
func TestWorkerKilledMidToolCall(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{noWorker: true},
		turn{Calls: []call{{"side_effect", `{}`}, {"block", `{}`}, {"echo", `{"text":"x"}`}}},
		turn{Calls: []call{{"side_effect", `{}`}}},
		turn{Text: "survived"},
	)
	first := e.spawnWorker(t)
	id := e.start("survive a crash", 10)
	waitFor(t, func() bool {
		return e.count(`SELECT count(*) FROM test_executions WHERE tool = 'block'`) == 1 &&
			e.count(`SELECT count(*) FROM tool_calls WHERE run_id = $1`, id) == 2
	})
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	// A re-run of block would now return at once: only the retry policy keeps it from running again.
	if err := os.WriteFile(filepath.Join(e.gate, "open"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e.spawnWorker(t)
	res, err := e.wait(id, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runs.StatusCompleted || res.Text != "survived" {
		t.Fatalf("result %+v", res)
	}
	tr := transcript(t, e, id)
	if len(tr.ToolCalls) != 4 {
		t.Fatalf("tool calls = %d", len(tr.ToolCalls))
	}
	seen := map[string]bool{}
	for _, tc := range tr.ToolCalls {
		if seen[tc.CallID] {
			t.Fatalf("call %s stored twice", tc.CallID)
		}
		seen[tc.CallID] = true
	}
	if tr.ToolCalls[1].Tool != "block" || tr.ToolCalls[1].Outcome != runs.OutcomeInterrupted {
		t.Fatalf("block call = %+v", tr.ToolCalls[1])
	}
	if n := e.count(`SELECT count(*) FROM test_executions WHERE tool = 'block'`); n != 1 {
		t.Fatalf("block ran %d times", n)
	}
	if n := e.count(`SELECT count(*) FROM test_executions WHERE tool = 'side_effect'`); n != 2 {
		t.Fatalf("side_effect ran %d times, want 2 (one per call)", n)
	}
	if n := e.count(`SELECT count(*) FROM messages WHERE run_id = $1`, id); n != 8 {
		t.Fatalf("messages = %d", n)
	}
}

// A worker killed with SIGKILL while its model turn waits on the provider:
// the turn's heartbeats stop, the server gives the attempt up at the model's
// heartbeat timeout rather than at its 3-minute start-to-close timeout, and
// a second worker runs the turn again and finishes the run. The history says
// which timeout ended the first attempt; the transcript holds the turn once.
func TestWorkerKilledMidModelTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{noWorker: true})
	e.model.answer = func(req chatRequest) turn {
		for _, m := range req.Messages {
			if m.Role == "tool" {
				return turn{Text: "survived"}
			}
		}
		return turn{Calls: []call{{"echo", `{"text":"x"}`}}}
	}
	inTurn := make(chan struct{})
	e.model.hold = func(r *http.Request, n int) {
		if n == 0 { // the first attempt of the first turn never gets its answer
			close(inTurn)
			<-r.Context().Done()
		}
	}
	first := e.spawnWorker(t)
	id := e.start("survive a lost model turn", 10)
	select {
	case <-inTurn:
	case <-time.After(time.Minute):
		t.Fatal("the first model turn did not reach the provider")
	}
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	e.spawnWorker(t)
	// Far past the start-to-close timeout: the history, not the clock, says
	// which timeout ended the first attempt.
	res, err := e.wait(id, 6*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runs.StatusCompleted || res.Text != "survived" || res.Turns != 2 {
		t.Fatalf("result %+v", res)
	}

	scheduled := map[int64]bool{} // model activities' scheduled event ids
	var started []*historypb.ActivityTaskStartedEventAttributes
	for _, ev := range fetchHistory(t, e, id).Events {
		switch ev.GetEventType() {
		case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == runact.ModelName {
				scheduled[ev.GetEventId()] = true
			}
		case enums.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			if a := ev.GetActivityTaskStartedEventAttributes(); scheduled[a.GetScheduledEventId()] {
				started = append(started, a)
			}
		}
	}
	if len(started) != 2 {
		t.Fatalf("%d model turns started, want 2", len(started))
	}
	lost, next := started[0], started[1]
	if lost.GetAttempt() != 2 {
		t.Fatalf("the lost turn finished at attempt %d, want 2", lost.GetAttempt())
	}
	if tf := lost.GetLastFailure().GetTimeoutFailureInfo(); tf.GetTimeoutType() != enums.TIMEOUT_TYPE_HEARTBEAT {
		t.Fatalf("the lost attempt ended with %v, want a heartbeat timeout", lost.GetLastFailure())
	}
	if next.GetAttempt() != 1 {
		t.Fatalf("the second turn took %d attempts", next.GetAttempt())
	}
	if n := len(e.model.Requests()); n != 3 {
		t.Fatalf("the provider was asked %d times, want 3 (the lost attempt, its retry, the last turn)", n)
	}
	tr := transcript(t, e, id)
	var roles []string
	for _, m := range tr.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, ","); got != "user,assistant,tool,assistant" {
		t.Fatalf("messages %s", got)
	}
	if len(tr.ToolCalls) != 1 || tr.ToolCalls[0].Outcome != runs.OutcomeOK {
		t.Fatalf("tool calls %+v", tr.ToolCalls)
	}
}
