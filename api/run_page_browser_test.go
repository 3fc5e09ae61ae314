package api_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/guilds/guilds/internal/apitest"
	"github.com/guilds/guilds/internal/audit"
	"github.com/guilds/guilds/internal/runs"
	"github.com/guilds/guilds/internal/usage"
)

// bigRunCalls is the run page's load figure: a turn of 200 tool calls.
const bigRunCalls = 200

// outcomeOf spreads the finished calls over every state the timeline shows.
func outcomeOf(i int) string {
	switch i % 10 {
	case 1:
		return runs.OutcomeError
	case 2:
		return runs.OutcomeRefused
	case 3:
		return runs.OutcomeDenied
	case 4:
		return runs.OutcomeTimedOut
	}
	return runs.OutcomeOK
}

// TestRunPageInChromium drives the run page and the run lists as an
// operator does (issue 34 items 5 and 6): a run of 200 calls, 150 of them
// finished in every state and 50 still running, reads as a summary and a
// timeline (state in words, duration, login, plain-words error); the other
// 50 finish while the page is open and the page follows them live. The time
// to render and to follow are logged as figures, never asserted. The run
// lists of the agent, the guild and the organisation filter, page and
// show a new run without a reload.
func TestRunPageInChromium(t *testing.T) {
	chromium := chromiumOrSkip(t)
	e := apitest.New(t, apitest.Options{})
	ctx := context.Background()
	org, guild, agent := e.Hierarchy()
	op := e.Operator(org)
	const temporalUI = "http://127.0.0.1:8233/namespaces/default/workflows/"
	e.Server.TemporalUI = temporalUI
	if _, err := usage.SetPrice(ctx, e.DB, usage.Price{Provider: "openrouter", Model: "m", InputPerMillion: 3, OutputPerMillion: 15, Currency: "USD"}); err != nil {
		t.Fatal(err)
	}
	r, err := runs.Create(ctx, e.DB, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "schedule", Model: "openrouter/m",
		Budget: 500, Message: "Reconcile every invoice of November"})
	if err != nil {
		t.Fatal(err)
	}
	if err := runs.MarkRunning(ctx, e.DB, r.ID); err != nil {
		t.Fatal(err)
	}
	if err := runs.SetRemaining(ctx, e.DB, r.ID, 500-bigRunCalls); err != nil {
		t.Fatal(err)
	}
	reqs := make([]runs.ToolCallRequest, bigRunCalls)
	for i := range reqs {
		reqs[i] = runs.ToolCallRequest{ID: fmt.Sprintf("call_%03d", i), Name: "invoice_read", Arguments: fmt.Sprintf(`{"n":%d}`, i)}
	}
	if _, err := runs.AppendMessage(ctx, e.DB, runs.Message{RunID: r.ID, Seq: 2, Role: runs.RoleAssistant, ToolCalls: reqs}); err != nil {
		t.Fatal(err)
	}
	if err := usage.RecordTurn(ctx, e.DB, usage.Turn{RunID: r.ID, Seq: 2, OrganisationID: org, GuildID: guild, AgentID: agent,
		Provider: "openrouter", Model: "m", PromptTokens: 12000, CompletionTokens: 3400}); err != nil {
		t.Fatal(err)
	}
	finish := func(i int) {
		t.Helper()
		now := time.Now()
		outcome := outcomeOf(i)
		result := "invoice ok"
		if outcome == runs.OutcomeError {
			result = "401 Unauthorized: the token was refused"
		}
		if _, _, err := runs.SaveToolCall(ctx, e.DB, runs.ToolCall{RunID: r.ID, Seq: 3 + i, CallID: reqs[i].ID, Tool: "invoice_read",
			Arguments: reqs[i].Arguments, Result: result, Outcome: outcome, StartedAt: now.Add(-1500 * time.Millisecond), FinishedAt: now, DurationMS: 1500}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < 150; i++ {
		finish(i)
	}
	if err := audit.Record(ctx, e.DB, audit.Event{OrganisationID: org, GuildID: guild, AgentID: agent, RunID: r.ID, Seq: 3,
		Action: audit.ActionToolCall, Tool: "invoice_read", Kind: "mcp", LoginScope: "organisation", AccountHint: "ada@acme.test", Outcome: "ok", Actor: "agent:" + agent}); err != nil {
		t.Fatal(err)
	}

	b := newAppBrowser(t, chromium, e.HTTP.URL)
	b.viewport(1280, 1000)
	b.open("/signin")
	b.typeIn(`input[name="token"]`, op)
	b.clickText("form", "API token", "Sign in")
	b.waitText("h1", "Organisations")

	b.open("/runs/" + r.ID)
	summary := `dl[aria-label="Run summary"]`
	timeline := `ol[aria-label="Timeline"]`
	b.waitText(summary, "Tool calls200 (50 running) · 60 not ok")
	for _, want := range []string{"Triggerschedule", "Modelopenrouter/m", "Turns1", "Budget used200 of 500 calls",
		"Tokens in / out12,000 / 3,400", "Cost0.0870 USD", "so far"} {
		b.waitText(summary, want)
	}
	for _, want := range []string{"timed out", "denied", "refused", "error", "running", "1.5 s", "as ada@acme.test (organisation's login)",
		"The service refused the login's credentials.", "The service did not answer in time.", "A person refused this call"} {
		b.waitText(timeline, want)
	}
	if href := b.eval(`[...document.querySelectorAll("a")].find((a) => a.textContent === "Open in the Temporal UI")?.href || ""`); href != temporalUI+"run-"+r.ID {
		t.Errorf("the Temporal UI link goes to %q", href)
	}
	rendered := b.eval(`["run-render", "run-build"].map((n) => performance.getEntriesByName(n).pop().duration.toFixed(1)).join(" ms, of which building the DOM ")`)
	t.Logf("figure: run page with %d calls (50 running) shown in %s ms (from the page's first line: the API reads, then the summary, timeline and transcript)", bigRunCalls, rendered)

	// The last 50 finish while the page is open: the page follows them
	// over its event stream. The promise resolves on the page's own change.
	b.eval(`(() => { window.__longest = 0; new PerformanceObserver((l) => { for (const e of l.getEntries()) window.__longest = Math.max(window.__longest, e.duration); }).observe({ type: "longtask" });
  window.__followed = new Promise((done) => { const t0 = performance.now();
  const check = () => { if (!document.querySelector('ol[aria-label="Timeline"] li.call-row[data-state="running"]')) { obs.disconnect(); done(performance.now() - t0); } };
  const obs = new MutationObserver(check); obs.observe(document.querySelector('ol[aria-label="Timeline"]'), { subtree: true, childList: true, attributes: true }); check(); }); return ""; })()`)
	for i := 150; i < bigRunCalls; i++ {
		finish(i)
	}
	followed := b.eval(`window.__followed.then((ms) => ms.toFixed(0) + " ms; " + (window.__longest ? "longest main-thread task meanwhile " + window.__longest.toFixed(0) + " ms" : "no main-thread task over 50 ms meanwhile"))`)
	t.Logf("figure: 50 calls finishing under the open page shown in %s (first write to the last row repainted, writing them included)", followed)
	b.waitText(summary, "Tool calls200 · 80 not ok")
	b.screenshot("run-timeline.png")
	if err := runs.Finish(ctx, e.DB, r.ID, runs.StatusCompleted, ""); err != nil {
		t.Fatal(err)
	}
	b.waitText("#run-status", "completed")
	// The badge follows the status event; the duration, the re-read of the
	// run that event starts.
	b.waitNoText(summary, "so far")

	// Run lists: 55 more runs of the agent, so the list pages.
	for i := 0; i < 55; i++ {
		if _, err := runs.Create(ctx, e.DB, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "direct", Budget: 5,
			Message: fmt.Sprintf("Question %d about the ledger", i)}); err != nil {
			t.Fatal(err)
		}
	}
	list := `table[aria-label="Runs"]`
	b.open("/agents/" + agent + "?tab=runs")
	b.waitText("p[role=status]", "50 runs shown")
	b.clickText("p.actions", "Older runs", "Older runs")
	b.waitText("p[role=status]", "56 runs shown")
	b.waitText(list, "Reconcile every invoice of November")
	b.waitText(list, "12,000 / 3,400")

	b.open("/guilds/" + guild + "?tab=runs")
	b.waitText(list, "Question 54 about the ledger")
	b.selectByLabel("Trigger", "schedule")
	b.clickText(`form[aria-label="Filter runs"]`, "", "Filter")
	b.waitText("p[role=status]", "1 run shown")
	b.waitText(list, "Reconcile every invoice of November")
	b.waitText(list, "200")
	b.screenshot("run-list.png")

	b.open("/orgs/" + org + "?tab=runs")
	b.selectByLabel("Status", "running")
	b.clickText(`form[aria-label="Filter runs"]`, "", "Filter")
	b.waitText(list, "No run matches.")
	// A run that starts while the list is open shows without a reload.
	live, err := runs.Create(ctx, e.DB, runs.NewRun{AgentID: agent, GuildID: guild, OrganisationID: org, Trigger: "group", Budget: 5, Message: "A new question from the group"})
	if err != nil {
		t.Fatal(err)
	}
	if err := runs.MarkRunning(ctx, e.DB, live.ID); err != nil {
		t.Fatal(err)
	}
	b.waitText(list, "A new question from the group")
}

// viewport sets the page's size, for screenshots an operator recognises.
func (b *appBrowser) viewport(w, h int64) {
	b.t.Helper()
	c, stop := context.WithTimeout(b.ctx, time.Minute)
	defer stop()
	if err := chromedp.Do(c, chromedp.EmulateViewport(w, h)); err != nil {
		b.t.Fatal(err)
	}
}

// selectByLabel picks the option whose value is value in the select named label.
func (b *appBrowser) selectByLabel(label, value string) {
	b.t.Helper()
	js := `(() => { const s = document.querySelector('select[aria-label=` + jsString(label) + `]'); if (!s) return "no select";
  s.value = ` + jsString(value) + `; s.dispatchEvent(new Event("change", { bubbles: true })); return s.value === ` + jsString(value) + ` ? "" : "no option"; })()`
	b.waitText(`select[aria-label=`+jsString(label)+`]`, "")
	if got := b.eval(js); got != "" {
		b.t.Fatalf("select %q: %s", label, got)
	}
}
