//go:build load

package run_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/api/enums/v1"

	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/workflows/run"
)

// The load harness (make load; not part of make test): LOAD_RUNS runs at
// once (default 100) of LOAD_CALLS tool calls each (default 20), driven by
// the scripted model on the dev server, on LOAD_WORKERS worker processes
// (default 1) sized by GUILDS_WORKER_*. Every turn asks for the mix of
// loadMix: quick native calls (local activities), a native call that stays
// an activity, the MCP tool on the local mcp-go server and an adapter-class
// tool on a local quote service. LOAD_KILL=1 runs two workers and kills one
// with SIGKILL once half the calls are stored.
func TestLoad(t *testing.T) {
	n, m := envInt(t, "LOAD_RUNS", 100), envInt(t, "LOAD_CALLS", 20)
	workers := envInt(t, "LOAD_WORKERS", 1)
	kill := os.Getenv("LOAD_KILL") == "1"
	if kill {
		workers = 2
	}
	e := newEnv(t, envOptions{noWorker: true})
	e.model.drop = true
	e.model.answer = func(req chatRequest) turn { return loadTurn(req, m) }
	quotes := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"price":101.5}`))
	}))
	t.Cleanup(quotes.Close)
	var procs []*exec.Cmd
	timings := t.TempDir()
	for i := range workers {
		procs = append(procs, e.spawnWorker(t, "RUNTEST_QUICK=1", "RUNTEST_ADAPTER="+quotes.URL,
			fmt.Sprintf("RUNTEST_TIMINGS=%s/worker-%d.txt", timings, i)))
	}
	mon := startMonitor(e, procs)
	time.Sleep(2 * time.Second) // the workers poll; their idle memory is read
	idleRSS := mon.rssNow()

	started := time.Now()
	ids, startErr := make([]string, n), make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16) // starts in flight at once
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ids[i], startErr[i] = run.Start(context.Background(), e.c, e.db, run.Input{AgentID: e.agent,
				Message: fmt.Sprintf("load run %d", i), Budget: m + 5, Models: e.res, TaskQueue: e.queue})
		}()
	}
	wg.Wait()
	for i, err := range startErr {
		if err != nil {
			t.Fatalf("start run %d: %v", i, err)
		}
	}
	if kill {
		for deadline := time.Now().Add(10 * time.Minute); e.count(`SELECT count(*) FROM tool_calls`) < n*m/2; {
			if time.Now().After(deadline) {
				t.Fatal("half the calls not stored within 10 minutes")
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err := procs[0].Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		t.Logf("killed worker %d at %d stored calls", procs[0].Process.Pid, e.count(`SELECT count(*) FROM tool_calls`))
	}
	failed := 0
	for _, id := range ids {
		res, err := e.wait(id, 15*time.Minute)
		if err != nil || res.Status != runs.StatusCompleted {
			failed++
			t.Errorf("run %s: %+v %v", id, res, err)
		}
	}
	wall := time.Since(started)
	mon.stop()

	// Every call stored once, at its own seq, with its own call id.
	calls := e.count(`SELECT count(*) FROM tool_calls`)
	if calls != n*m {
		t.Errorf("stored %d tool calls, want %d", calls, n*m)
	}
	if d := e.count(`SELECT count(*) FROM (SELECT run_id, call_id FROM tool_calls GROUP BY 1, 2 HAVING count(*) > 1) d`); d != 0 {
		t.Errorf("%d calls stored twice", d)
	}
	short := e.count(`SELECT count(*) FROM (SELECT r.id FROM runs r LEFT JOIN tool_calls c ON c.run_id = r.id GROUP BY r.id HAVING count(c.seq) <> $1) s`, m)
	if short != 0 {
		t.Errorf("%d runs without exactly %d calls", short, m)
	}
	// Every stored call has its result message, which is what the model reads.
	if lost := e.count(`SELECT count(*) FROM tool_calls c WHERE NOT EXISTS
		(SELECT 1 FROM messages m WHERE m.run_id = c.run_id AND m.seq = c.seq AND m.role = 'tool')`); lost != 0 {
		t.Errorf("%d stored calls have no result message (the model asks for them again)", lost)
	}
	// side_effect, not idempotent, ran at most once per call (once unless interrupted).
	var sideCalls, sideRuns, interrupted int
	if err := e.db.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM tool_calls WHERE tool_name = 'side_effect'),
		(SELECT count(*) FROM test_executions WHERE tool = 'side_effect'),
		(SELECT count(*) FROM tool_calls WHERE outcome = 'interrupted')`).Scan(&sideCalls, &sideRuns, &interrupted); err != nil {
		t.Fatal(err)
	}
	if sideRuns > sideCalls || (!kill && sideRuns != sideCalls) {
		t.Errorf("side_effect ran %d times for %d calls", sideRuns, sideCalls)
	}

	tool := e.durations(t, `SELECT c.tool_name, extract(epoch FROM c.finished_at - a.created_at) FROM tool_calls c
		CROSS JOIN LATERAL (SELECT created_at FROM messages WHERE run_id = c.run_id AND seq < c.seq AND role = 'assistant' ORDER BY seq DESC LIMIT 1) a`)
	inCall := e.durations(t, `SELECT tool_name, extract(epoch FROM finished_at - started_at) FROM tool_calls`)
	runTimes := e.durations(t, `SELECT 'run', extract(epoch FROM finished_at - created_at) FROM runs`)
	t.Logf("load: %d runs × %d calls on %d worker(s) (kill=%v), GUILDS_WORKER_* %s, GUILDS_DB_MAX_CONNS=%q",
		n, m, workers, kill, workerSettings(), os.Getenv("GUILDS_DB_MAX_CONNS"))
	t.Logf("wall %.1fs, throughput %.1f tool calls/s, %d runs failed, %d calls interrupted, side_effect %d runs for %d calls",
		wall.Seconds(), float64(calls)/wall.Seconds(), failed, interrupted, sideRuns, sideCalls)
	for _, name := range []string{"quick", "native", "mcp", "adapter", "all"} {
		p50, p95, p99 := pct(tool[name])
		t.Logf("tool call %-8s (model answer stored → result stored) n=%d p50 %v p95 %v p99 %v", name, len(tool[name]), p50, p95, p99)
		p50, p95, p99 = pct(inCall[name])
		t.Logf("tool call %-8s (handler and pipeline, started → finished)  p50 %v p95 %v p99 %v", name, p50, p95, p99)
	}
	p50, p95, p99 := pct(runTimes["run"])
	t.Logf("run completion (created → finished) p50 %v p95 %v p99 %v", p50, p95, p99)
	logTimings(t, readTimings(t, timings))
	logDispatch(t, e, ids)
	t.Logf("postgres connections of the test database: peak %d (peak active %d)", mon.peakConns, mon.peakActive)
	t.Logf("worker RSS: idle %s, peak %s", mib(idleRSS), mib(mon.peakRSS))
	if !kill {
		if _, p95, _ := pct(tool["quick"]); p95 >= 100*time.Millisecond {
			t.Logf("NOTE: model answer → quick result p95 %v is not under 100 ms (it holds the model turn's dispatch; the quick call itself is the local activity line)", p95)
		}
	}
}

// timing is one line of a worker's activity timer (timings_test.go).
type timing struct {
	typ                          string
	local                        bool
	run                          string
	seq, attempt                 int
	scheduled, started, finished time.Time
}

func readTimings(t *testing.T, dir string) []timing {
	files, err := filepath.Glob(filepath.Join(dir, "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var out []timing
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			var tm timing
			var s, st, fin int64
			if n, _ := fmt.Sscanf(line, "%s %t %s %d %d %d %d %d", &tm.typ, &tm.local, &tm.run, &tm.seq, &tm.attempt, &s, &st, &fin); n != 8 {
				continue // the last, empty line; or one cut short by SIGKILL
			}
			tm.scheduled, tm.started, tm.finished = time.Unix(0, s), time.Unix(0, st), time.Unix(0, fin)
			out = append(out, tm)
		}
	}
	return out
}

// logTimings reports the quick call itself (the local activity, scheduled →
// completed inside its workflow task) apart from the dispatch of the model
// turn that asked for it (the model activity returned in the worker → the
// turn's first local activity scheduled), and the activities' scheduled →
// completed for comparison.
func logTimings(t *testing.T, tms []timing) {
	modelDone := map[string]time.Time{} // run/seq of a turn's first call → model activity returned
	for _, tm := range tms {
		if tm.typ == "model" {
			modelDone[fmt.Sprintf("%s/%d", tm.run, tm.seq+1)] = tm.finished
		}
	}
	var laTotal, laWait, laRun, dispatch []time.Duration
	acts := map[string][]time.Duration{}
	for _, tm := range tms {
		switch {
		case tm.local:
			laTotal = append(laTotal, tm.finished.Sub(tm.scheduled))
			laWait = append(laWait, tm.started.Sub(tm.scheduled))
			laRun = append(laRun, tm.finished.Sub(tm.started))
			if done, ok := modelDone[fmt.Sprintf("%s/%d", tm.run, tm.seq)]; ok {
				dispatch = append(dispatch, tm.scheduled.Sub(done))
			}
		default:
			acts[tm.typ] = append(acts[tm.typ], tm.finished.Sub(tm.scheduled))
		}
	}
	p50, p95, p99 := pct(laTotal)
	t.Logf("quick tool call (local activity scheduled → completed) n=%d p50 %v p95 %v p99 %v", len(laTotal), p50, p95, p99)
	p50, p95, p99 = pct(laWait)
	t.Logf("  of which waiting for a local activity slot (scheduled → started) p50 %v p95 %v p99 %v", p50, p95, p99)
	p50, p95, p99 = pct(laRun)
	t.Logf("  of which running (started → completed) p50 %v p95 %v p99 %v", p50, p95, p99)
	p50, p95, p99 = pct(dispatch)
	t.Logf("model turn dispatch (model activity returned → the turn's first quick call scheduled) n=%d p50 %v p95 %v p99 %v", len(dispatch), p50, p95, p99)
	for _, typ := range slices.Sorted(maps.Keys(acts)) {
		p50, p95, p99 = pct(acts[typ])
		t.Logf("activity %-12s (attempt scheduled on the server → completed in the worker) n=%d p50 %v p95 %v p99 %v", typ, len(acts[typ]), p50, p95, p99)
	}
}

// logDispatch reads the runs' histories: how long workflow tasks and
// activities waited in the task queue (scheduled → started), and how long
// the server took from a model turn's completion to the workflow task that
// reads it being picked up.
func logDispatch(t *testing.T, e *env, ids []string) {
	var wft, afterModel []time.Duration
	wftBy := map[string][]time.Duration{} // first of the run, later on the sticky queue, later on the normal queue
	retried := map[string]int{}           // activities that needed more than one attempt, by type and last failure
	actWait := map[string][]time.Duration{}
	for _, id := range ids {
		evs := fetchHistory(t, e, id).Events
		at := map[int64]time.Time{}
		typ := map[int64]string{}
		modelCompleted := time.Time{}
		sticky := map[int64]bool{}
		first := true
		for _, ev := range evs {
			at[ev.GetEventId()] = ev.GetEventTime().AsTime()
			switch ev.GetEventType() {
			case enums.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				typ[ev.GetEventId()] = ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName()
			case enums.EVENT_TYPE_ACTIVITY_TASK_STARTED:
				a := ev.GetActivityTaskStartedEventAttributes()
				if a.GetAttempt() > 1 {
					why := a.GetLastFailure().GetTimeoutFailureInfo().GetTimeoutType().String()
					retried[typ[a.GetScheduledEventId()]+" after "+why]++
				}
				if a.GetAttempt() == 1 {
					actWait[typ[a.GetScheduledEventId()]] = append(actWait[typ[a.GetScheduledEventId()]],
						ev.GetEventTime().AsTime().Sub(at[a.GetScheduledEventId()]))
				}
			case enums.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
				if typ[ev.GetActivityTaskCompletedEventAttributes().GetScheduledEventId()] == "model" {
					modelCompleted = ev.GetEventTime().AsTime()
				}
			case enums.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
				sticky[ev.GetEventId()] = ev.GetWorkflowTaskScheduledEventAttributes().GetTaskQueue().GetKind() == enums.TASK_QUEUE_KIND_STICKY
			case enums.EVENT_TYPE_WORKFLOW_TASK_STARTED:
				sid := ev.GetWorkflowTaskStartedEventAttributes().GetScheduledEventId()
				wait := ev.GetEventTime().AsTime().Sub(at[sid])
				wft = append(wft, wait)
				kind := "later, normal queue"
				switch {
				case first:
					kind, first = "first of a run", false
				case sticky[sid]:
					kind = "later, sticky queue"
				}
				wftBy[kind] = append(wftBy[kind], wait)
				if !modelCompleted.IsZero() {
					afterModel = append(afterModel, ev.GetEventTime().AsTime().Sub(modelCompleted))
					modelCompleted = time.Time{}
				}
			}
		}
	}
	p50, p95, p99 := pct(wft)
	t.Logf("workflow task (history: scheduled → started) n=%d p50 %v p95 %v p99 %v", len(wft), p50, p95, p99)
	for _, kind := range slices.Sorted(maps.Keys(wftBy)) {
		p50, p95, p99 = pct(wftBy[kind])
		t.Logf("  %s n=%d p50 %v p95 %v p99 %v", kind, len(wftBy[kind]), p50, p95, p99)
	}
	p50, p95, p99 = pct(afterModel)
	t.Logf("model turn completed → the next workflow task started (history) n=%d p50 %v p95 %v p99 %v", len(afterModel), p50, p95, p99)
	for _, k := range slices.Sorted(maps.Keys(retried)) {
		t.Logf("activities retried: %s: %d", k, retried[k])
	}
	for _, name := range slices.Sorted(maps.Keys(actWait)) {
		p50, p95, p99 = pct(actWait[name])
		t.Logf("activity %-12s (history: scheduled → started, first attempts) n=%d p50 %v p95 %v p99 %v", name, len(actWait[name]), p50, p95, p99)
	}
}

// loadMix is one turn's calls: two quick native calls, a native call that
// stays an activity, the MCP tool and the adapter tool.
var loadMix = []call{
	{"echo", `{"text":"load"}`},
	{"add", `{"a":1,"b":2}`},
	{"side_effect", `{}`},
	{"notion_lookup", `{"query":"roadmap"}`},
	{"quotes_quote", `{"symbol":"ETH"}`},
}

// loadTurn answers a run's request from its own transcript: the next calls
// of the mix until m calls are made, then the answer.
func loadTurn(req chatRequest, m int) turn {
	done := 0
	for _, msg := range req.Messages {
		if msg.Role == "tool" {
			done++
		}
	}
	if done >= m {
		return turn{Text: "done"}
	}
	k := min(len(loadMix), m-done)
	return turn{Calls: slices.Clone(loadMix[:k])}
}

func toolKind(name string) string {
	switch name {
	case "echo", "add":
		return "quick"
	case "side_effect":
		return "native"
	case "notion_lookup":
		return "mcp"
	case "quotes_quote":
		return "adapter"
	}
	return name
}

func (e *env) durations(t *testing.T, sql string) map[string][]time.Duration {
	rows, err := e.db.Query(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]time.Duration{}
	for rows.Next() {
		var name string
		var secs float64
		if err := rows.Scan(&name, &secs); err != nil {
			t.Fatal(err)
		}
		d := time.Duration(secs * float64(time.Second))
		out[toolKind(name)] = append(out[toolKind(name)], d)
		out["all"] = append(out["all"], d)
	}
	return out
}

func pct(d []time.Duration) (p50, p95, p99 time.Duration) {
	if len(d) == 0 {
		return
	}
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(p int) time.Duration { return s[min(len(s)*p/100, len(s)-1)].Round(100 * time.Microsecond) }
	return at(50), at(95), at(99)
}

// monitor samples the test database's connections and the workers' RSS.
type monitor struct {
	e                     *env
	procs                 []*exec.Cmd
	done                  chan struct{}
	wg                    sync.WaitGroup
	mu                    sync.Mutex
	peakConns, peakActive int
	peakRSS               int64
}

func startMonitor(e *env, procs []*exec.Cmd) *monitor {
	m := &monitor{e: e, procs: procs, done: make(chan struct{})}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.done:
				return
			case <-t.C:
			}
			var all, active int
			_ = e.db.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE state = 'active')
				FROM pg_stat_activity WHERE datname = current_database()`).Scan(&all, &active)
			rss := m.rssNow()
			m.mu.Lock()
			m.peakConns, m.peakActive, m.peakRSS = max(m.peakConns, all), max(m.peakActive, active), max(m.peakRSS, rss)
			m.mu.Unlock()
		}
	}()
	return m
}

func (m *monitor) stop() {
	close(m.done)
	m.wg.Wait()
}

// rssNow is the sum of the live workers' resident memory, in bytes.
func (m *monitor) rssNow() int64 {
	var sum int64
	for _, p := range m.procs {
		raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.Process.Pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
				sum += kb << 10
			}
		}
	}
	return sum
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

func envInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s must be a positive whole number, got %q", name, v)
	}
	return n
}

func workerSettings() string {
	var out []string
	for _, k := range []string{"GUILDS_WORKER_MAX_ACTIVITIES", "GUILDS_WORKER_MAX_WORKFLOW_TASKS", "GUILDS_WORKER_POLLERS"} {
		v := os.Getenv(k)
		if v == "" {
			v = "default"
		}
		out = append(out, k+"="+v)
	}
	return strings.Join(out, " ")
}
