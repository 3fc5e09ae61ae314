//go:build load

package run_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/workflows/run"
)

// TestFairness (make fairness; not part of make test) measures whether one
// organisation's burst starves another's. On one small worker, the quiet
// organisation first runs FAIR_QUIET runs alone (the idle figure); then the
// noisy organisation starts 100 times as many, and once its backlog is
// building the quiet organisation runs the same again. Every run makes
// LOAD_CALLS quick calls, one a turn. FAIRNESS=off starts every run without
// its fairness key and trigger priority, for the comparison. The figures are
// logged, never asserted: they depend on the machine.
func TestFairness(t *testing.T) {
	quiet, m := envInt(t, "FAIR_QUIET", 2), envInt(t, "LOAD_CALLS", 10)
	noisy := 100 * quiet
	on := os.Getenv("FAIRNESS") != "off"
	run.SetFairness(on)
	t.Cleanup(func() { run.SetFairness(true) })

	e := newEnv(t, envOptions{noWorker: true})
	e.model.drop = true
	e.model.answer = func(req chatRequest) turn { return quickTurn(req, m) }
	quietAgent := e.secondOrganisation(t)
	// A worker small enough that the noisy backlog waits in the server's
	// task queue, which is where fairness orders it.
	// FAIR_WORKFLOW_TASKS sizes its workflow task slots apart (4 by
	// default): workflow tasks go to the worker's sticky queue, where the
	// server does not apply fairness (ADR 0519).
	sizing := []string{fmt.Sprintf("GUILDS_WORKER_MAX_WORKFLOW_TASKS=%d", envInt(t, "FAIR_WORKFLOW_TASKS", 4)),
		"GUILDS_WORKER_MAX_ACTIVITIES=8", "GUILDS_WORKER_POLLERS=2"}
	e.spawnWorker(t, append([]string{"RUNTEST_QUICK=1"}, sizing...)...)

	idleIDs := e.startMany(t, quietAgent, "quiet idle", quiet, m)
	e.waitAll(t, idleIDs)
	idle := e.quickCallTimes(t, idleIDs)

	noisyIDs := e.startMany(t, e.agent, "noisy", noisy, m)
	// The quiet runs start once the noisy ones have a backlog: a tenth of
	// their calls stored.
	for deadline := time.Now().Add(10 * time.Minute); e.count(`SELECT count(*) FROM tool_calls WHERE run_id = ANY($1::uuid[])`, noisyIDs) < noisy*m/10; {
		if time.Now().After(deadline) {
			t.Fatal("the noisy organisation stored fewer than a tenth of its calls in 10 minutes")
		}
		time.Sleep(50 * time.Millisecond) // polling a count: what it waits for is the count
	}
	loadedIDs := e.startMany(t, quietAgent, "quiet loaded", quiet, m)
	e.waitAll(t, loadedIDs)
	loaded := e.quickCallTimes(t, loadedIDs)
	noisyDone := e.count(`SELECT count(*) FROM runs WHERE id = ANY($1::uuid[]) AND status = 'completed'`, noisyIDs)
	for _, id := range noisyIDs {
		_ = run.Cancel(context.Background(), e.c, id) // what is left of the noisy load is not measured
	}

	idleRuns, loadedRuns := e.runTimes(t, idleIDs), e.runTimes(t, loadedIDs)
	i50, i95, _ := pct(idle)
	l50, l95, _ := pct(loaded)
	t.Logf("fairness %v: %d quiet runs beside %d noisy runs (%d of them done when the quiet ones were), %d quick calls a run, worker %v",
		on, quiet, noisy, noisyDone, m, sizing)
	t.Logf("quiet organisation, quick call (model answer stored → result stored): idle p50 %v p95 %v; beside the noisy one p50 %v p95 %v; p95 ratio %.2f",
		i50, i95, l50, l95, float64(l95)/float64(max(i95, time.Microsecond)))
	for _, w := range []struct {
		label string
		ids   []string
	}{{"idle", idleIDs}, {"beside the noisy one", loadedIDs}} {
		wt, act := e.scheduleToStart(t, w.ids)
		w50, w95, _ := pct(wt)
		a50, a95, _ := pct(act)
		t.Logf("quiet organisation %s, schedule to start: workflow tasks p50 %v p95 %v (%d); activities p50 %v p95 %v (%d)",
			w.label, w50, w95, len(wt), a50, a95, len(act))
	}
	_, iw, _ := pct(idleRuns)
	_, lw, _ := pct(loadedRuns)
	t.Logf("quiet organisation, whole run (created → finished): idle p95 %v, beside the noisy one p95 %v; ratio %.2f", iw, lw, float64(lw)/float64(max(iw, time.Microsecond)))
}

func (e *env) runTimes(t *testing.T, ids []string) []time.Duration {
	return e.seconds(t, `SELECT extract(epoch FROM finished_at - created_at) FROM runs WHERE id = ANY($1::uuid[])`, ids)
}

// quickTurn asks for one quick call a turn until m are made.
func quickTurn(req chatRequest, m int) turn {
	done := 0
	for _, msg := range req.Messages {
		if msg.Role == "tool" {
			done++
		}
	}
	if done >= m {
		return turn{Text: "done"}
	}
	return turn{Calls: []call{{"echo", `{"text":"fair"}`}}}
}

// secondOrganisation adds another organisation with one agent on the same
// model, and returns the agent.
func (e *env) secondOrganisation(t *testing.T) string {
	ctx := context.Background()
	var org, guild, agent string
	if err := e.db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Quiet', 'quiet') RETURNING id`).Scan(&org); err != nil {
		t.Fatal(err)
	}
	if err := e.db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, org).Scan(&guild); err != nil {
		t.Fatal(err)
	}
	if err := e.db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, model, prompt) VALUES ($1, 'calm', 'openrouter/test-model', 'You are a test agent.') RETURNING id`,
		guild).Scan(&agent); err != nil {
		t.Fatal(err)
	}
	return agent
}

func (e *env) startMany(t *testing.T, agent, label string, n, m int) []string {
	ids, errs := make([]string, n), make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ids[i], errs[i] = run.Start(context.Background(), e.c, e.db, run.Input{AgentID: agent,
				Message: fmt.Sprintf("%s run %d", label, i), Budget: m + 5, Models: e.res, TaskQueue: e.queue})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("start %s run %d: %v", label, i, err)
		}
	}
	return ids
}

func (e *env) waitAll(t *testing.T, ids []string) {
	for _, id := range ids {
		res, err := e.wait(id, 15*time.Minute)
		if err != nil || res.Status != runs.StatusCompleted {
			t.Fatalf("run %s: %+v %v", id, res, err)
		}
	}
}

// quickCallTimes is, for each call of the runs, the time from the model's
// answer being stored to the call's result being stored.
func (e *env) quickCallTimes(t *testing.T, ids []string) []time.Duration {
	return e.seconds(t, `SELECT extract(epoch FROM c.finished_at - a.created_at) FROM tool_calls c
		CROSS JOIN LATERAL (SELECT created_at FROM messages WHERE run_id = c.run_id AND seq < c.seq AND role = 'assistant' ORDER BY seq DESC LIMIT 1) a
		WHERE c.run_id = ANY($1::uuid[])`, ids)
}

// seconds reads a column of seconds of the runs ids.
func (e *env) seconds(t *testing.T, sql string, ids []string) []time.Duration {
	rows, err := e.db.Query(context.Background(), sql, ids)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []time.Duration
	for rows.Next() {
		var secs float64
		if err := rows.Scan(&secs); err != nil {
			t.Fatal(err)
		}
		out = append(out, time.Duration(secs*float64(time.Second)))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// scheduleToStart says how long the runs' work waited for the worker:
// each workflow task from scheduled to started (both in the history), and
// each tool activity from scheduled (the history) to the call's start (its
// row; the history writes a retried activity's start only when it ends).
// Where the quiet organisation's calls wait shows here: workflow tasks go to
// the worker's sticky queue, where the server applies no fairness, and
// activities to the shared queue, where it does (ADR 0519).
func (e *env) scheduleToStart(t *testing.T, ids []string) (workflowTasks, activities []time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a failure bound
	defer cancel()
	for _, id := range ids {
		scheduled := map[int64]time.Time{}
		var tools []time.Time
		it := e.c.GetWorkflowHistory(ctx, "run-"+id, "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
		for it.HasNext() {
			ev, err := it.Next()
			if err != nil {
				t.Fatalf("history of run %s: %v", id, err)
			}
			at := ev.GetEventTime().AsTime()
			switch ev.GetEventType() {
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED:
				scheduled[ev.GetEventId()] = at
			case enumspb.EVENT_TYPE_WORKFLOW_TASK_STARTED:
				workflowTasks = append(workflowTasks, at.Sub(scheduled[ev.GetWorkflowTaskStartedEventAttributes().GetScheduledEventId()]))
			case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				if ev.GetActivityTaskScheduledEventAttributes().GetActivityType().GetName() == runact.ToolName {
					tools = append(tools, at)
				}
			}
		}
		started, err := e.db.Query(ctx, `SELECT started_at FROM tool_calls WHERE run_id = $1 ORDER BY seq`, id)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; started.Next(); i++ {
			var at time.Time
			if err := started.Scan(&at); err != nil {
				t.Fatal(err)
			}
			if i < len(tools) {
				activities = append(activities, at.Sub(tools[i]))
			}
		}
		started.Close()
	}
	return workflowTasks, activities
}
