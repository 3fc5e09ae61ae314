package run_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdklog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	runact "github.com/guilds/guilds/activities/run"
	"github.com/guilds/guilds/internal/access"
	"github.com/guilds/guilds/internal/agentsecrets"
	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/native/secrets"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/secret"
	"github.com/guilds/guilds/workflows/run"
)

// secretWait is what one time-skipping run of secret_request saw.
type secretWait struct {
	steps  []string
	timers []time.Duration
	during string // the run's status while it waited
	model  string // what the model read as the call's result
}

// waitForSecret runs one direct run whose only call is secret_request, on
// Temporal's test environment skipping time, with the guild's waiting time
// for secret_request set to wait (ask off: the call itself is not held).
// When answerAfter is not zero an operator provides the secret that long
// after the run started, and the answer signals the run as the API does.
func waitForSecret(t *testing.T, wait, answerAfter time.Duration) secretWait {
	t.Helper()
	e := newSkippingEnv(t, turn{Calls: []call{{secrets.ToolRequest, `{"name":"VENDOR_TOKEN","reason":"to call the vendor"}`}}},
		turn{Text: "thanks"})
	ctx := context.Background()
	if _, err := approvals.Save(ctx, e.db, approvals.Setting{Scope: approvals.ScopeGuild, ScopeID: e.guild,
		Tool: secrets.ToolRequest, Wait: wait, UpdatedBy: "user:ann"}, nil); err != nil {
		t.Fatal(err)
	}
	entry, _ := secret.GenerateKey("k1")
	kr, err := secret.ParseKeyring(entry)
	if err != nil {
		t.Fatal(err)
	}
	a, closeMCP := activitiesWith(e.db, e.gate, e.model.URL, e.mcpURL, "", slog.New(slog.DiscardHandler), false,
		func(d *runact.Deps) {
			secrets.Register(d.Tools, secrets.Deps{DB: e.db, Keyring: kr})
		})
	t.Cleanup(closeMCP)

	var suite testsuite.WorkflowTestSuite
	suite.SetLogger(sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)))
	env := suite.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute) // real time the activities may take, a failure bound
	run.Register(env, a)
	var out secretWait
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		out.steps = append(out.steps, info.ActivityType.Name)
	})
	env.SetOnTimerScheduledListener(func(_ string, d time.Duration) {
		out.steps = append(out.steps, "timer")
		out.timers = append(out.timers, d)
	})
	env.SetOnTimerFiredListener(func(string) { out.steps = append(out.steps, "timer fired") })

	r := e.createRun("call the vendor")
	// Seen an hour in (or at answerAfter): the run waits, holding nothing.
	look := answerAfter
	if look == 0 {
		look = time.Hour
	}
	env.RegisterDelayedCallback(func() {
		out.during = e.runStatusOf(r.ID)
		if answerAfter == 0 {
			return
		}
		reqs, err := agentsecrets.RunRequests(ctx, e.db, r.ID)
		if err != nil || len(reqs) != 1 {
			t.Errorf("requests %+v (%v)", reqs, err)
			return
		}
		req := reqs[0]
		v := "vendor-token-0123456789"
		if _, err := agentsecrets.AnswerRequest(ctx, e.db, kr, access.Principal{Admin: true}, req.ID,
			agentsecrets.Answer{Value: &v}, "user:ann"); err != nil {
			t.Error(err)
			return
		}
		env.SignalWorkflow(run.ApprovalSignal, run.ApprovalSignalPayload{RequestID: req.ID})
	}, look)
	env.ExecuteWorkflow(run.WorkflowName, run.Params{RunID: r.ID, AgentID: r.AgentID, GuildID: r.GuildID,
		OrganisationID: r.OrganisationID, Trigger: r.Trigger})
	if !env.IsWorkflowCompleted() {
		t.Fatal("the run did not end")
	}
	var res run.Result
	if err := env.GetWorkflowResult(&res); err != nil || res.Status != runs.StatusCompleted {
		t.Fatalf("run: %+v %v", res, err)
	}
	if got := e.runStatusOf(r.ID); got != runs.StatusCompleted {
		t.Errorf("run status at the end: %s", got)
	}
	for _, m := range e.model.Requests()[1].Messages {
		if m.Role == "tool" {
			out.model = m.Content
		}
	}
	return out
}

// near: the handler counts the wait on the worker's clock from the
// request's creation, the timer on the run's, which the test environment
// starts a moment apart; a minute either way is a failure bound.
func near(got, want time.Duration) bool {
	return got > want-time.Minute && got < want+time.Minute
}

func (e *env) runStatusOf(runID string) string {
	r, err := runs.Load(context.Background(), e.db, runID)
	if err != nil {
		e.t.Error(err)
		return ""
	}
	return r.Status
}

// An operator who answers a secret_request an hour later still unblocks
// the run: the call was suspended, the run waited on one timer and the
// answer's signal (no activity held, status waiting), and the call made
// again reads the answer.
func TestASecretRequestAnsweredAnHourLaterUnblocksTheRun(t *testing.T) {
	t.Parallel()
	got := waitForSecret(t, 0, time.Hour) // the setting's default wait: a day
	if got.during != runs.StatusWaiting {
		t.Errorf("run status while it waited: %q", got.during)
	}
	if len(got.timers) != 1 || !near(got.timers[0], 24*time.Hour) {
		t.Errorf("timers %v, want one of a day", got.timers)
	}
	// The answer came before the timer fired; the call ran twice, with
	// nothing between but the wait.
	want := []string{runact.SnapshotName, runact.ModelName, runact.ToolName, "timer",
		runact.ToolName, runact.ModelName, runact.FinishName}
	if strings.Join(got.steps, " ") != strings.Join(want, " ") {
		t.Errorf("steps %v, want %v", got.steps, want)
	}
	if !strings.HasPrefix(got.model, "the operator provided VENDOR_TOKEN") {
		t.Errorf("the model read %q", got.model)
	}
}

// Nobody answers: the run waits exactly the operators' waiting time for
// secret_request (three days here), then the call tells the model so; the
// request stays open in the inbox.
func TestASecretRequestNobodyAnswersWaitsTheOperatorsTime(t *testing.T) {
	t.Parallel()
	got := waitForSecret(t, 72*time.Hour, 0)
	if got.during != runs.StatusWaiting {
		t.Errorf("run status while it waited: %q", got.during)
	}
	if len(got.timers) != 1 || !near(got.timers[0], 72*time.Hour) {
		t.Errorf("timers %v, want one of three days", got.timers)
	}
	want := []string{runact.SnapshotName, runact.ModelName, runact.ToolName, "timer", "timer fired",
		runact.ToolName, runact.ModelName, runact.FinishName}
	if strings.Join(got.steps, " ") != strings.Join(want, " ") {
		t.Errorf("steps %v, want %v", got.steps, want)
	}
	if !strings.Contains(got.model, "no answer yet to your request for VENDOR_TOKEN") || !strings.Contains(got.model, fmt.Sprint(72*time.Hour)) {
		t.Errorf("the model read %q", got.model)
	}
}
