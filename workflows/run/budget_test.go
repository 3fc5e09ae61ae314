package run_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/guilds/guilds/internal/approvals"
	"github.com/guilds/guilds/internal/budgets"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/usage"
	"github.com/guilds/guilds/workflows/run"
)

func ptr[T any](v T) *T { return &v }

// An organisation allowed 2 tool calls a day: the third call of the run is
// refused with a result naming the limit, no further model turn is made, and
// the run ends completed with a closing message and a stop reason that say
// so. A new run is then refused at start, naming the limit and its use.
func TestBudgetReachedMidRun(t *testing.T) {
	t.Parallel()
	for _, quick := range []bool{false, true} {
		t.Run(map[bool]string{false: "activities", true: "fast path"}[quick], func(t *testing.T) {
			t.Parallel()
			budgetReachedMidRun(t, quick)
		})
	}
}

// budgetReachedMidRun is TestBudgetReachedMidRun with echo as an activity
// or, when quick, as a local activity (the fast path, ADR 0511).
func budgetReachedMidRun(t *testing.T, quick bool) {
	third := "side_effect" // it records each run of it
	if quick {
		third = "noop" // quick: refused in a local activity
	}
	e := newEnv(t, envOptions{quick: quick},
		turn{Calls: []call{{"echo", `{"text":"one"}`}}},
		turn{Calls: []call{{"echo", `{"text":"two"}`}}},
		turn{Calls: []call{{third, `{}`}}},
		turn{Text: "never asked"},
	)
	ctx := context.Background()
	if err := budgets.Set(ctx, e.db, budgets.Scope{Kind: budgets.ScopeOrganisation, ID: e.org, OrganisationID: e.org},
		budgets.Limits{ToolCallsPerDay: ptr[int64](2)}); err != nil {
		t.Fatal(err)
	}
	id := e.start("use the tools", 10)
	res, err := e.wait(id, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runs.StatusCompleted || !strings.Contains(res.Stopped, "budget of 2 tool calls per day is reached") ||
		!strings.HasPrefix(res.Text, "This run stopped: the organisation's budget") {
		t.Fatalf("result %+v", res)
	}
	tr := transcript(t, e, id)
	if len(tr.ToolCalls) != 3 {
		t.Fatalf("tool calls = %d", len(tr.ToolCalls))
	}
	for i, want := range []string{runs.OutcomeOK, runs.OutcomeOK, runs.OutcomeRefused} {
		if tr.ToolCalls[i].Outcome != want {
			t.Errorf("call %d: %s %q", i, tr.ToolCalls[i].Outcome, tr.ToolCalls[i].Result)
		}
	}
	if r := tr.ToolCalls[2].Result; !strings.Contains(r, "did not run") || !strings.Contains(r, "2 tool calls per day") ||
		!strings.Contains(r, "2 used today") {
		t.Errorf("refusal %q", r)
	}
	if n := e.count(`SELECT count(*) FROM test_executions WHERE tool = 'side_effect'`); n != 0 {
		t.Errorf("the refused call ran %d times", n)
	}
	if n := len(e.model.Requests()); n != 3 {
		t.Errorf("model requests = %d, want 3: no turn after the refusal", n)
	}
	last := tr.Messages[len(tr.Messages)-1]
	if last.Role != runs.RoleAssistant || last.Content != res.Text {
		t.Errorf("closing message %+v", last)
	}
	if tr.Run.Status != runs.StatusCompleted || !strings.HasPrefix(tr.Run.StopReason, "budget_reached: the organisation's budget") {
		t.Errorf("run %+v", tr.Run)
	}
	// The refused call counted nothing: the use is the 2 calls that ran.
	b, err := budgets.Get(ctx, e.db, budgets.Scope{Kind: budgets.ScopeOrganisation, ID: e.org, OrganisationID: e.org}, time.Now())
	if err != nil || b.Use.ToolCallsToday != 2 || b.Use.TokensToday != 45 {
		t.Fatalf("budget %+v %v", b, err)
	}

	_, err = run.Start(ctx, e.c, e.db, run.Input{AgentID: e.agent, Message: "again", Models: e.res, TaskQueue: e.queue})
	var reached *budgets.ReachedError
	if !errors.As(err, &reached) {
		t.Fatalf("start err = %v", err)
	}
	want := budgets.Reach{Scope: budgets.ScopeOrganisation, ScopeID: e.org, Limit: budgets.LimitToolCalls, Allowed: 2, Used: 2}
	got := reached.Reach
	if got.Scope != want.Scope || got.ScopeID != want.ScopeID || got.Limit != want.Limit || got.Allowed != 2 || got.Used != 2 ||
		!got.ResetsAt.After(time.Now()) || got.ResetsAt.Hour() != 0 {
		t.Fatalf("reach %+v", got)
	}
	if n := e.count(`SELECT count(*) FROM runs`); n != 1 {
		t.Fatalf("%d runs: the refused start stored one", n)
	}
}

// Each turn's reported usage is stored and priced: tokens × the admin's
// price per million. A money limit per month stops the run before the turn
// that would spend past it.
func TestMoneyFromPriceTimesUsage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{},
		turn{Calls: []call{{"noop", `{}`}}},
		turn{Calls: []call{{"noop", `{}`}}},
		turn{Text: "never asked"},
	)
	ctx := context.Background()
	// The scripted model reports 10 prompt and 5 completion tokens a turn:
	// (10 × 3 + 5 × 15) / 1e6 = 0.000105 USD.
	if _, err := usage.SetPrice(ctx, e.db, usage.Price{Provider: "openrouter", Model: "test-model",
		InputPerMillion: 3, OutputPerMillion: 15, Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	if err := budgets.Set(ctx, e.db, budgets.Scope{Kind: budgets.ScopeAgent, ID: e.agent, OrganisationID: e.org, GuildID: e.guild},
		budgets.Limits{MoneyPerMonth: ptr(0.0002), Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	id := e.start("spend", 10)
	res, err := e.wait(id, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Stopped, "the agent's budget of 0.00 USD") && !strings.Contains(res.Stopped, "model spend per month") {
		t.Fatalf("result %+v", res)
	}
	if n := len(e.model.Requests()); n != 2 {
		t.Fatalf("model requests = %d, want 2", n)
	}
	u, err := usage.OfRun(ctx, e.db, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Turns) != 2 || u.PromptTokens != 20 || u.CompletionTokens != 10 || len(u.Costs) != 1 || u.Costs[0].Currency != "USD" ||
		math.Abs(u.Costs[0].Amount-0.00021) > 1e-12 || u.Turns[0].Provider != "openrouter" || u.Turns[0].Model != "test-model" {
		t.Fatalf("usage %+v", u)
	}
	b, err := budgets.Get(ctx, e.db, budgets.Scope{Kind: budgets.ScopeAgent, ID: e.agent, OrganisationID: e.org, GuildID: e.guild}, time.Now())
	if err != nil || math.Abs(b.Use.MoneyThisMonth-0.00021) > 1e-12 || b.Use.TokensToday != 30 {
		t.Fatalf("budget %+v %v", b, err)
	}
	tr := transcript(t, e, id)
	if !strings.Contains(tr.Run.StopReason, "model spend per month") || len(tr.ToolCalls) != 2 {
		t.Fatalf("run %+v, %d calls", tr.Run, len(tr.ToolCalls))
	}
}

// A call that waited for a person is weighed again once approved: if the
// budget was reached meanwhile (another run's call), it is refused and the
// run stops without another model turn.
func TestBudgetReachedWhileACallWaited(t *testing.T) {
	t.Parallel()
	gate := &askGate{version: "p1"}
	e := newEnv(t, envOptions{approvals: gate}, turn{Calls: []call{{"side_effect", `{}`}}}, turn{Text: "never asked"})
	ctx := context.Background()
	if err := budgets.Set(ctx, e.db, budgets.Scope{Kind: budgets.ScopeAgent, ID: e.agent, OrganisationID: e.org, GuildID: e.guild},
		budgets.Limits{ToolCallsPerDay: ptr[int64](1)}); err != nil {
		t.Fatal(err)
	}
	id := e.start("pay the bill", 10)
	req := e.pending(id, 1)
	if _, err := e.db.Exec(ctx, `INSERT INTO audit_events (organisation_id, guild_id, agent_id, action, tool, outcome)
		VALUES ($1, $2, $3, 'tool_call', 'echo', 'ok')`, e.org, e.guild, e.agent); err != nil {
		t.Fatal(err)
	}
	e.decide(id, req.ID, approvals.Decision{Approve: true, UserName: "Ann"})
	res, err := e.wait(id, 5*time.Minute)
	if err != nil || !strings.Contains(res.Stopped, "the agent's budget of 1 tool calls per day is reached") {
		t.Fatalf("run: %+v %v", res, err)
	}
	if n := e.count(`SELECT count(*) FROM test_executions WHERE tool = 'side_effect'`); n != 0 {
		t.Fatalf("side_effect ran %d times", n)
	}
	if n := e.count(`SELECT count(*) FROM tool_calls WHERE run_id = $1 AND outcome = 'refused'`, id); n != 1 {
		t.Fatalf("%d refused calls", n)
	}
	if n := len(e.model.Requests()); n != 1 {
		t.Fatalf("model requests = %d, want 1", n)
	}
}
