package run_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

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
