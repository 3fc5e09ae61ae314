package run_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/testdb"
	"github.com/guilds/guilds/workflows/run"
)

// A request nobody answers for days expires, on Temporal's test server
// skipping time: the operator set the wait (3 days, and 29 days, both under
// the 30-day bound), the model reads the expiry as the call's result, the
// call never runs, and the history does not grow with the wait: the same
// steps, one timer, whatever its length, and nothing scheduled while it runs.
func TestADaysLongWaitExpiresAsADenial(t *testing.T) {
	t.Parallel()
	var steps [2][]string
	for i, wait := range []time.Duration{72 * time.Hour, 29 * 24 * time.Hour} {
		t.Run(fmt.Sprint(wait), func(t *testing.T) {
			steps[i] = expireAfter(t, wait)
		})
	}
	if strings.Join(steps[0], " ") != strings.Join(steps[1], " ") {
		t.Errorf("a longer wait made another history:\n3 days:  %v\n29 days: %v", steps[0], steps[1])
	}
}

// expireAfter runs one run whose only call asks, with wait as the guild's
// setting, lets it expire, checks what the model and the transcript read,
// and returns the run's steps as the test environment saw them (timers by
// count, not length).
func expireAfter(t *testing.T, wait time.Duration) []string {
	e := newSkippingEnv(t, turn{Calls: []call{{"side_effect", `{}`}}}, turn{Text: "I will ask again tomorrow"})
	types := approvals.ArgTypes(json.RawMessage(`{"type":"object","properties":{}}`))
	if _, err := approvals.Save(context.Background(), e.db, approvals.Setting{Scope: approvals.ScopeGuild, ScopeID: e.guild,
		Tool: "side_effect", Ask: true, Wait: wait, UpdatedBy: "user:ann"}, types); err != nil {
		t.Fatal(err)
	}
	a, closeMCP := activitiesWith(e.db, e.gate, e.model.URL, e.mcpURL, "", slog.New(slog.DiscardHandler), false,
		func(d *runact.Deps) { d.Approvals = runact.PolicyGate{DB: e.db} })
	t.Cleanup(closeMCP)

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute) // real time the activities may take, a failure bound
	run.Register(env, a)
	var steps []string
	var timers []time.Duration
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		steps = append(steps, info.ActivityType.Name)
	})
	env.SetOnLocalActivityStartedListener(func(info *activity.Info, _ context.Context, _ []any) {
		steps = append(steps, "local:"+info.ActivityType.Name)
	})
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) {
		steps = append(steps, "timer")
		timers = append(timers, d)
	})
	env.SetOnTimerFiredListener(func(string) { steps = append(steps, "timer fired") })
	started := env.Now()

	r := e.createRun("pay the supplier")
	env.ExecuteWorkflow(run.WorkflowName, run.Params{RunID: r.ID, AgentID: r.AgentID, GuildID: r.GuildID,
		OrganisationID: r.OrganisationID, Trigger: r.Trigger})
	if !env.IsWorkflowCompleted() {
		t.Fatal("the run did not end")
	}
	var res run.Result
	if err := env.GetWorkflowResult(&res); err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("run: %+v %v", res, err)
	}
	if waited := env.Now().Sub(started); waited < wait {
		t.Errorf("the run ended after %s of workflow time, before its %s wait", waited, wait)
	}
	if len(timers) != 1 || timers[0] != wait {
		t.Errorf("timers %v, want one of %s", timers, wait)
	}
	// The whole history, bounded: nothing is scheduled while the run waits
	// (the request is recorded, one timer, the wait is settled), and the
	// call is recorded as denied, never run.
	want := []string{runact.SnapshotName, runact.ModelName, runact.ToolName, runact.ApprovalAskName, "timer", "timer fired",
		runact.ApprovalSettleName, runact.ToolRecordName, runact.ModelName, runact.FinishName}
	if strings.Join(steps, " ") != strings.Join(want, " ") {
		t.Errorf("steps %v, want %v", steps, want)
	}

	if n := e.count(`SELECT count(*) FROM test_executions`); n != 0 {
		t.Errorf("the call ran %d times without an approval", n)
	}
	if n := e.count(`SELECT count(*) FROM approval_requests WHERE run_id = $1 AND state = 'expired'`, r.ID); n != 1 {
		t.Error("the request is not expired")
	}
	// The audit trail: proposed by the agent, expired by the platform, and
	// the denied call's event names the request.
	if got := e.lifecycle(r.ID); got != "proposed by agent, expired by platform, tool_call denied" {
		t.Errorf("audit trail: %s", got)
	}
	days := fmt.Sprintf("nobody approved this call within %d days", int(wait.Hours()/24))
	tr := transcript(t, e, r.ID)
	if len(tr.ToolCalls) != 1 || tr.ToolCalls[0].Outcome != runs.OutcomeDenied || !strings.Contains(tr.ToolCalls[0].Result, days) {
		t.Fatalf("tool calls = %+v", tr.ToolCalls)
	}
	read := false
	for _, m := range e.model.Requests()[1].Messages {
		read = read || (m.Role == "tool" && strings.Contains(m.Content, days))
	}
	if !read {
		t.Errorf("the model did not read the expiry (%q)", days)
	}
	return steps
}

// newSkippingEnv is an env for Temporal's test environment: the database,
// the agent and the scripted model, and no Temporal client or worker.
func newSkippingEnv(t testing.TB, script ...turn) *env {
	t.Helper()
	e := &env{t: t, dbURL: testdb.URL(t), gate: t.TempDir()}
	db, err := pgxpool.New(context.Background(), e.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(db.Close)
	e.db = db
	ctx := context.Background()
	if _, err := db.Exec(ctx, sideEffectsTable); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO organisations (name, slug) VALUES ('Acme', 'acme') RETURNING id`).Scan(&e.org); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO guilds (organisation_id, name) VALUES ($1, 'ops') RETURNING id`, e.org).Scan(&e.guild); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(ctx, `INSERT INTO agents (guild_id, name, model, prompt) VALUES ($1, 'scout', 'openrouter/test-model', 'You are a test agent.') RETURNING id`,
		e.guild).Scan(&e.agent); err != nil {
		t.Fatal(err)
	}
	e.model = newScriptedModel(t, script...)
	e.mcpURL = newMCPServer(t).URL
	return e
}

// createRun stores a queued run as run.Start does, without starting its
// workflow.
func (e *env) createRun(msg string) runs.Run {
	e.t.Helper()
	r, err := runs.Create(context.Background(), e.db, runs.NewRun{AgentID: e.agent, GuildID: e.guild, OrganisationID: e.org,
		Trigger: runs.TriggerDirect, Model: "openrouter/test-model", Budget: 5, Message: msg})
	if err != nil {
		e.t.Fatal(err)
	}
	return r
}

// lifecycle is the run's audit trail of its approvals, oldest first: each
// approval step with who took it, and the calls that name a request.
func (e *env) lifecycle(runID string) string {
	e.t.Helper()
	rows, err := e.db.Query(context.Background(), `SELECT CASE WHEN action = 'approval'
			THEN outcome || ' by ' || split_part(actor, ':', 1) ELSE action || ' ' || outcome END
		FROM audit_events WHERE run_id = $1 AND approval_id IS NOT NULL ORDER BY id`, runID)
	if err != nil {
		e.t.Fatal(err)
	}
	steps, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		e.t.Fatal(err)
	}
	return strings.Join(steps, ", ")
}
