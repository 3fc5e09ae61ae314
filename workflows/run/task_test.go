package run_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/api/enums/v1"

	"github.com/guilds/guilds/internal/connections"
	"github.com/guilds/guilds/internal/connectors"
	"github.com/guilds/guilds/internal/grants"
	"github.com/guilds/guilds/internal/grants/grantstest"
	"github.com/guilds/guilds/internal/mcppool"
	"github.com/guilds/guilds/internal/mcppool/taskstest"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/workflows/run"
)

// newTasksRemote turns on, at the env's guild, a server that needs no login
// and answers every call with a task (the MCP Tasks extension), and starts a
// worker with the production engine, pool and offer path.
func newTasksRemote(t *testing.T, e *env, polls int) *taskstest.Server {
	t.Helper()
	ctx := context.Background()
	peer := taskstest.New(t, polls)
	if err := grants.Seed(ctx, e.db, grantstest.Registry()); err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.Exec(ctx, `INSERT INTO mcp_servers (slug, name, kind, transport, url, auth, config)
		VALUES ('jobs', 'Jobs', 'remote', 'http', $1, 'none', '{}')`, peer.URL+"/mcp"); err != nil {
		t.Fatal(err)
	}
	entry, _ := secret.GenerateKey("k1")
	keys, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	eng, err := connectors.New(ctx, connectors.Options{DB: e.db, Keyring: keys, Providers: []connectors.ProviderID{"oauth2"},
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(eng.Close)
	pool := mcppool.New(mcppool.Options{DB: e.db, Credentials: eng.Resolver()})
	t.Cleanup(pool.Close)
	svc := &connections.Service{DB: e.db, Engine: eng, Sessions: pool, Checker: mcppool.Checker{DB: e.db, Engine: eng}}
	if _, err := svc.Connect(ctx, platformAdmin, connections.Request{
		Login: connections.ConnectInput{Slug: "jobs", OwnerScope: grants.ScopeGuild, OwnerID: e.guild}}); err != nil {
		t.Fatalf("turn the server on: %v", err)
	}
	(&oauthRemote{eng: eng, pool: pool}).startWorker(t, e)
	return peer
}

// events counts the history's events of a type.
func events(t *testing.T, e *env, id string, typ enums.EventType) int {
	t.Helper()
	n := 0
	for _, ev := range fetchHistory(t, e, id).Events {
		if ev.GetEventType() == typ {
			n++
		}
	}
	return n
}

// A call the server runs as a task is polled by the run workflow, one
// durable timer per poll, until it completes; its result is stored as a
// call's, through the one pipeline.
func TestRunFollowsATaskToItsResult(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{noWorker: true})
	const polls = 2
	peer := newTasksRemote(t, e, polls)
	e.model.script = []turn{{Calls: []call{{"jobs_slow_compute", `{"label":"report"}`}}}, {Text: "done"}}
	id := e.start("compute the report", 5)
	res, err := e.wait(id, 2*time.Minute)
	if err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("run: %+v %v", res, err)
	}
	tr := transcript(t, e, id)
	if len(tr.ToolCalls) != 1 || tr.ToolCalls[0].Outcome != runs.OutcomeOK || !strings.HasPrefix(tr.ToolCalls[0].Result, "computed report") {
		t.Fatalf("tool calls = %+v", tr.ToolCalls)
	}
	if !strings.Contains(tr.ToolCalls[0].Result, "remaining") { // stamped like every call's result
		t.Errorf("the result has no trailer: %q", tr.ToolCalls[0].Result)
	}
	if n := peer.Count("tasks/get"); n != polls+1 {
		t.Errorf("tasks/get sent %d times, want %d", n, polls+1)
	}
	if n := events(t, e, id, enums.EVENT_TYPE_TIMER_STARTED); n != polls+1 {
		t.Errorf("%d timers, want one per poll (%d)", n, polls+1)
	}
	if peer.Count("tasks/cancel") != 0 {
		t.Error("a completed task was cancelled")
	}
	recordHistory(t, e, id, "task.json")
}

// A task that fails at its server is the call's error result.
func TestRunRecordsAFailedTask(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{noWorker: true})
	newTasksRemote(t, e, 1)
	e.model.script = []turn{{Calls: []call{{"jobs_failing_job", `{}`}}}, {Text: "it failed"}}
	id := e.start("run the job", 5)
	if res, err := e.wait(id, 2*time.Minute); err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("run: %+v %v", res, err)
	}
	tr := transcript(t, e, id)
	if len(tr.ToolCalls) != 1 || tr.ToolCalls[0].Outcome != runs.OutcomeError ||
		!strings.HasPrefix(tr.ToolCalls[0].Result, "ERROR: the server's task for this call failed: the job crashed") {
		t.Fatalf("tool calls = %+v", tr.ToolCalls)
	}
}

// Cancelling a run that follows a task cancels the task at its server.
func TestCancellingARunCancelsItsTask(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{noWorker: true})
	peer := newTasksRemote(t, e, 1_000_000) // never ends by itself
	e.model.script = []turn{{Calls: []call{{"jobs_slow_compute", `{"label":"forever"}`}}}, {Text: "done"}}
	id := e.start("compute forever", 5)
	peer.WaitFor(t, "a poll", func(s *taskstest.Server) bool { return s.Count("tasks/get") >= 1 })
	if err := e.c.CancelWorkflow(context.Background(), run.WorkflowID(id), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := e.wait(id, 2*time.Minute); err == nil {
		t.Fatal("a cancelled run ended without error")
	}
	peer.WaitFor(t, "tasks/cancel", func(s *taskstest.Server) bool { return s.Count("tasks/cancel") >= 1 })
	if got := peer.Status("task-1"); got != "cancelled" {
		t.Errorf("the task is %q at its server", got)
	}
	if got := e.runStatus(id); got != runs.StatusCancelled {
		t.Errorf("run status %s", got)
	}
	recordHistory(t, e, id, "task_cancelled.json")
}

// While a run follows a task it reads waiting and says what it waits for
// (the call's tool, the task and how it stood at the last poll); it goes
// back to running only when no call waits any more: with two tasks, the
// first one's end leaves it waiting for the second.
func TestARunFollowingATaskReadsWaiting(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{noWorker: true})
	peer := newTasksRemote(t, e, 1_000_000) // ends when the test says
	ctx := context.Background()
	// Every status the run goes through, in order, kept by the database.
	if _, err := e.db.Exec(ctx, `CREATE TABLE test_statuses (n serial, run_id uuid, status text);
		CREATE FUNCTION test_note_status() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN INSERT INTO test_statuses (run_id, status) VALUES (NEW.id, NEW.status); RETURN NULL; END $$;
		CREATE TRIGGER test_statuses AFTER UPDATE OF status ON runs
			FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION test_note_status();`); err != nil {
		t.Fatal(err)
	}
	e.model.script = []turn{{Calls: []call{{"jobs_slow_compute", `{"label":"a"}`}, {"jobs_slow_compute", `{"label":"b"}`}}},
		{Text: "done"}}
	id := e.start("compute both", 5)
	var followed []runs.FollowedTask
	untilRun(t, e, id, "two tasks followed", func(conn *pgxpool.Conn) bool {
		r, err := runs.Load(ctx, conn, id)
		if err != nil || r.Status != runs.StatusWaiting {
			return false
		}
		followed, err = runs.FollowedTasks(ctx, conn, id)
		return err == nil && len(followed) == 2
	})
	for _, f := range followed {
		if f.Tool != "jobs_slow_compute" || !strings.HasPrefix(f.TaskID, "task-") || f.Status != "working" {
			t.Errorf("followed %+v", f)
		}
	}
	peer.Complete("task-1")
	untilRun(t, e, id, "the first task's result", func(conn *pgxpool.Conn) bool {
		var n int
		return conn.QueryRow(ctx, `SELECT count(*) FROM tool_calls WHERE run_id = $1`, id).Scan(&n) == nil && n == 1
	})
	if got := e.runStatus(id); got != runs.StatusWaiting {
		t.Errorf("one task of two ended: the run is %s", got)
	}
	if left, err := runs.FollowedTasks(ctx, e.db, id); err != nil || len(left) != 1 || left[0].TaskID != "task-2" {
		t.Errorf("still followed: %+v (%v)", left, err)
	}
	peer.Complete("task-2")
	if res, err := e.wait(id, 2*time.Minute); err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("run: %+v %v", res, err)
	}
	var seen []string
	rows, err := e.db.Query(ctx, `SELECT status FROM test_statuses WHERE run_id = $1 ORDER BY n`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		seen = append(seen, s)
	}
	if got := strings.Join(seen, " "); got != "running waiting running completed" {
		t.Errorf("statuses %s, want running waiting running completed", got)
	}
}

// untilRun returns once cond holds, checked again at each notification of
// the run's events (a status change, a message), never on a clock.
func untilRun(t *testing.T, e *env, runID, what string, cond func(*pgxpool.Conn) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a failure bound, not a pace
	defer cancel()
	conn, err := e.db.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "LISTEN guilds_run_events"); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "UNLISTEN guilds_run_events") //nolint:errcheck
	for !cond(conn) {
		if _, err := conn.Conn().WaitForNotification(ctx); err != nil {
			t.Fatalf("run %s: never saw %s: %v", runID, what, err)
		}
	}
}
