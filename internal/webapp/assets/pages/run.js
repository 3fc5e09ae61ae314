// A run: a header that sums it up, a timeline of its model turns and tool
// calls (each call's state in colour and words, its duration, its login, its
// progress while it runs), what Temporal is retrying, and the transcript.
// Live over /api/runs/{id}/events; the Temporal UI link opens the same workflow.
import * as api from "../api.gen.js";
import { h, clear, status, when } from "../ui.js";
import { app, onLeave } from "../state.js";
import { approvalCard } from "./approvals.js";
import { inputCard } from "./inputs.js";
import { runMedia, namesKept } from "./runmedia.js";
import { ms, duration, tokens, callStates, plainError } from "./runparts.js";

const finished = new Set(["succeeded", "failed", "cancelled", "canceled", "completed", "timed_out"]);
// How often a live run asks Temporal what it is trying (a retry emits no event).
const activityEvery = 3000;

export async function runPage(main, id) {
  performance.mark("run-start");
  const detail = await api.get_runs_by_id(id);
  let run = detail.run;
  const badge = h("span", { class: "badge " + run.status, id: "run-status" }, run.status);
  const cancel = h("button", { type: "button", class: "danger", id: "cancel-run", onclick: async () => {
    if (!confirm("Cancel this run? Its current call is stopped and it will not go on.")) return;
    await api.post_runs_by_id_cancel(id); status("Cancel requested");
  } }, "Cancel run");
  const ui = app.me?.temporal_ui;
  main.append(h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "/" }, "Organisations"), " / ",
    h("a", { href: `/agents/${run.agent_id}?tab=runs` }, "Agent"), " / run"),
  h("h1", {}, "Run ", h("code", {}, id.slice(0, 8))),
  h("p", {}, badge, " started ", when(run.started_at || run.created_at), " ", cancel, " ",
    ui ? h("a", { href: ui + "run-" + id, target: "_blank", rel: "noopener noreferrer" }, "Open in the Temporal UI") : h("span", { class: "muted" }, "Temporal workflow run-" + id)));
  const err = h("p", { class: "form-error", role: "alert" }, run.error || "");
  // Why the platform stopped the run (a budget reached), and what its model turns used.
  const stopText = (r) => r.stop_reason ? "Stopped: " + r.stop_reason.replace(/^budget_reached: /, "") : "";
  const stopped = h("p", { class: "badge warn", id: "run-stopped", role: "status" }, stopText(run));
  const usageText = (u) => !u || !u.turns.length ? "" : `Model tokens: ${u.prompt_tokens} in, ${u.completion_tokens} out` +
    u.costs.map((c) => ` · ${c.amount.toFixed(4)} ${c.currency}`).join("") + (u.unpriced_turns ? ` · ${u.unpriced_turns} turn(s) unpriced` : "");
  const usageLine = h("p", { class: "muted", id: "run-usage" }, usageText(detail.usage));
  const summary = h("dl", { class: "run-summary", "aria-label": "Run summary" });
  const retry = h("section", { class: "run-activity", "aria-label": "What the run is trying now", "aria-live": "polite" });
  const timeline = h("ol", { class: "timeline", "aria-label": "Timeline" });
  const transcript = h("ol", { class: "transcript", id: "transcript", "aria-live": "polite" });
  // While a call waits for a person, its request shows here with the answers.
  const waiting = h("section", { id: "run-waiting", "aria-live": "polite" });
  const showWaiting = async (st) => {
    if (st !== "waiting") { clear(waiting); delete waiting.dataset.shown; return; }
    const [reqs, forms] = await Promise.all([api.get_runs_by_id_approvals(id).catch(() => []), api.get_runs_by_id_inputs(id).catch(() => [])]);
    const open = reqs.filter((r) => r.state === "pending");
    const asks = forms.filter((r) => r.state === "pending");
    // The same open requests keep their cards, so a reason or an answer
    // being typed survives the page's re-reads.
    const shown = [...open, ...asks].map((r) => r.id).join(",");
    if (waiting.dataset.shown === shown) return;
    waiting.dataset.shown = shown;
    const again = () => showWaiting(badge.textContent);
    clear(waiting, open.length ? [h("h2", {}, "Waiting for an approval"), open.map((r) => approvalCard(r, again))] : null,
      asks.length ? [h("h2", {}, "Waiting for input a server asks for"), asks.map((r) => inputCard(r, again))] : null);
  };
  main.append(summary, usageLine, stopped, err, retry, waiting, h("h2", {}, "Timeline"), timeline, h("h2", {}, "Transcript"), transcript);

  // State of the page: the stored calls, the logins, the turns' usage.
  const calls = new Map(detail.tool_calls.map((c) => [c.call_id, c]));
  let logins = detail.logins || {};
  let turnUsage = new Map(detail.usage.turns.map((t) => [t.seq, t]));
  let usage = detail.usage;
  let steps = [];
  const rows = new Map(); // call id -> its timeline row
  const byCall = new Map(); // call id -> its transcript details
  let turns = 0;

  const renderSummary = () => {
    const all = rows.size;
    const running = [...rows.keys()].filter((k) => !calls.has(k)).length;
    const errors = [...calls.values()].filter((c) => c.outcome !== "ok").length;
    const item = (term, ...value) => [h("dt", {}, term), h("dd", {}, ...value)];
    clear(summary,
      item("Duration", duration(run)),
      item("Trigger", run.trigger),
      item("Model", run.model || "the agent's default"),
      item("Turns", String(turns)),
      item("Tool calls", `${all}`, running ? ` (${running} running)` : "", errors ? ` · ${errors} not ok` : ""),
      item("Budget used", `${run.budget - run.remaining_tool_calls} of ${run.budget} calls`),
      item("Tokens in / out", tokens(usage.prompt_tokens, usage.completion_tokens)),
      item("Cost", usage.costs.length ? usage.costs.map((c) => `${c.amount.toFixed(4)} ${c.currency}`).join(" + ") +
        (usage.unpriced_turns ? ` (${usage.unpriced_turns} turn(s) without a price)` : "") : usage.turns.length ? "no price known for this model" : "—"));
  };

  // A call's row: the state is a class (colour) and a word (text). A row is
  // rebuilt only when what it shows changed, so a live update of one call
  // does not repaint the other 199.
  const paintCall = (tcId) => {
    const row = rows.get(tcId);
    if (!row) return;
    const c = calls.get(tcId);
    // A call of an ended run with no record was lost with its worker.
    const state = c ? c.outcome : finished.has(run.status) ? "interrupted" : "running";
    const login = c ? logins[c.seq] : null;
    const step = !c ? stepOf(row.dataset.index) : null;
    const sig = [state, c?.duration_ms, login?.account_hint, step?.progress, step?.total, step?.attempt].join("|");
    if (row.dataset.sig === sig) return;
    row.dataset.sig = sig;
    row.className = "call-row state-" + state;
    row.dataset.state = state;
    clear(row,
      h("span", { class: "state" }, callStates[state] || state),
      " ", h("code", {}, row.dataset.tool),
      " ", h("span", { class: "muted" }, c ? ms(c.duration_ms) : "running"),
      login?.account_hint ? [" ", h("span", { class: "login" }, "as " + login.account_hint + (login.login_scope ? ` (${login.login_scope}'s login)` : ""))] : null,
      step ? progressLine(step) : null, c && c.outcome !== "ok" ? h("p", { class: "plain-error" }, plainError(c.outcome, c.result)) : null,
      h("a", { href: "#call-" + tcId, class: "small" }, "details"));
  };
  // A running call's pending activity: the pending tool activities, in
  // schedule order, line up with the calls still running, in seq order.
  let runningIdx = null;
  const stepOf = (idx) => {
    const tools = steps.filter((s) => s.activity === "tool" || s.activity === "tool_local");
    if (!tools.length) return null;
    runningIdx ??= [...rows.entries()].filter(([k]) => !calls.has(k)).map(([, r]) => r.dataset.index);
    return tools[runningIdx.indexOf(idx)] || null;
  };
  const paintAll = () => { runningIdx = null; for (const k of rows.keys()) paintCall(k); };

  const addTurn = (m) => {
    timeline.querySelector("li.empty")?.remove();
    turns++;
    const t = turnUsage.get(m.seq);
    const li = h("li", { class: "turn", "data-seq": m.seq },
      h("p", { class: "turn-head" }, h("strong", {}, `Turn ${turns}`), " · model",
        t ? ` · ${t.prompt_tokens.toLocaleString()} in / ${t.completion_tokens.toLocaleString()} out` : "",
        m.tool_calls?.length ? ` · ${m.tool_calls.length} call${m.tool_calls.length === 1 ? "" : "s"}` : " · answered"));
    const list = h("ol", { class: "calls" });
    (m.tool_calls || []).forEach((tc, i) => {
      const row = h("li", { "data-index": String(m.seq + 1 + i), "data-tool": tc.name || tc.function?.name || "tool" });
      rows.set(tc.id, row);
      list.append(row);
      paintCall(tc.id);
    });
    if (list.childElementCount) li.append(list);
    timeline.append(li);
  };

  const media = runMedia(id);
  await media.load();
  performance.mark("run-fetched"); // read from the API: what follows is the page's own work
  onLeave(() => media.close());
  let last = 0;
  const add = (m) => {
    if (m.seq <= last) return;
    last = m.seq;
    if (m.role === "tool") {
      const slot = byCall.get(m.tool_call_id);
      if (slot) {
        slot.querySelector(".result").textContent = m.content; slot.classList.add("done");
        const result = () => m.content;
        media.attach(m.seq, slot, result);
        // A live result: what it kept is listed once it names it.
        if (namesKept(m.content)) media.load().then(() => media.attach(m.seq, slot, result));
        return;
      }
    }
    if (m.role === "assistant") addTurn(m);
    const li = h("li", { class: "msg " + m.role }, h("span", { class: "role" }, m.role), m.content ? h("div", { class: "content" }, m.content) : null);
    for (const tc of m.tool_calls || []) {
      const meta = calls.get(tc.id);
      const d = h("details", { class: "call", "data-call": tc.id, id: "call-" + tc.id },
        h("summary", {}, "Tool call ", h("code", {}, tc.name || tc.function?.name || "tool")),
        h("h4", {}, "Arguments"), h("pre", { class: "wrap" }, pretty(tc.arguments ?? tc.function?.arguments)),
        h("h4", {}, "Result"), h("pre", { class: "result wrap" }, meta?.result || ""),
        h("h4", {}, "Metadata"), h("pre", { class: "meta wrap" }, meta ? pretty({ outcome: meta.outcome, duration_ms: meta.duration_ms, metadata: meta.metadata }) : ""));
      byCall.set(tc.id, d);
      li.append(d);
    }
    transcript.append(li);
  };
  detail.messages.forEach(add);
  const setStatus = (r) => {
    run = r;
    badge.textContent = r.status; badge.className = "badge " + r.status;
    err.textContent = !r.error ? "" : r.status === "failed" ? "The run failed: " + r.error : r.error;
    stopped.textContent = stopText(r); stopped.hidden = !r.stop_reason;
    cancel.hidden = finished.has(r.status);
    showWaiting(r.status);
    renderSummary();
  };
  setStatus(run);
  if (!timeline.childElementCount) timeline.append(h("li", { class: "muted empty" }, "No model turn yet."));
  performance.measure("run-render", "run-start");
  performance.measure("run-build", "run-fetched");
  timeline.dataset.rendered = "true";
  if (finished.has(run.status)) return;

  // Re-read the stored calls: at most one read in flight, and one more after
  // it when something changed meanwhile (200 calls finishing at once are a
  // handful of reads, not 200).
  let reading = null, again = false;
  const reread = async () => {
    if (reading) { again = true; return; }
    reading = (async () => {
      do {
        again = false;
        const fresh = await api.get_runs_by_id(id).catch(() => null);
        if (!fresh) break;
        usageLine.textContent = usageText(fresh.usage);
        usage = fresh.usage; turnUsage = new Map(fresh.usage.turns.map((t) => [t.seq, t])); logins = fresh.logins || {};
        for (const c of fresh.tool_calls) {
          calls.set(c.call_id, c);
          const d = byCall.get(c.call_id);
          if (d) { d.querySelector(".meta").textContent = pretty({ outcome: c.outcome, duration_ms: c.duration_ms, metadata: c.metadata }); if (!d.querySelector(".result").textContent) d.querySelector(".result").textContent = c.result; }
        }
        paintAll();
        setStatus(fresh.run);
      } while (again);
      reading = null;
    })();
  };

  const showSteps = async () => {
    if (finished.has(run.status) || document.hidden) return;
    const got = await api.get_runs_by_id_activity(id).catch(() => null);
    if (!got) return;
    steps = got.steps;
    clear(retry, steps.filter((s) => s.attempt > 1 || s.last_failure).map(stepLine));
    paintAll();
  };
  const tick = setInterval(() => { renderSummary(); showSteps(); }, activityEvery);
  onLeave(() => clearInterval(tick));
  showSteps();

  const es = new EventSource(`/api/runs/${encodeURIComponent(id)}/events?after=${last}`);
  es.addEventListener("message", (ev) => {
    const e = JSON.parse(ev.data);
    if (!e.message) return;
    add(e.message);
    if (e.message.role === "tool") reread(); else renderSummary();
  });
  // The wait shows in the transcript: a call that asks, then how it was answered.
  const answered = new Map();
  es.addEventListener("approval", (ev) => {
    const r = JSON.parse(ev.data).data;
    if (!r || answered.get(r.id) === r.state) return;
    answered.set(r.id, r.state);
    transcript.append(h("li", { class: "msg approval", "data-approval": r.id }, h("span", { class: "role" }, "approval"),
      h("div", { class: "content" }, approvalLine(r))));
    showWaiting(badge.textContent);
  });
  es.addEventListener("status", (ev) => {
    const e = JSON.parse(ev.data);
    if (e.run) setStatus(e.run);
    reread();
    if (e.run && finished.has(e.run.status)) { es.close(); clearInterval(tick); clear(retry); }
  });
  onLeave(() => es.close());
}

// progressLine shows a running call's last reported progress and its attempt.
function progressLine(s) {
  const bits = [];
  if (s.progress != null) {
    if (s.total) bits.push(h("progress", { value: s.progress, max: s.total, "aria-label": "Progress" }), ` ${s.progress} of ${s.total}`);
    else bits.push(`${s.progress} done`);
  }
  if (s.attempt > 1) bits.push(` · attempt ${s.attempt}`);
  return bits.length ? h("span", { class: "progress" }, " ", bits) : null;
}

// stepLine says what Temporal is retrying, as its UI does: the attempt, the
// last error and when the next try is.
function stepLine(s) {
  const next = s.next_attempt_at ? Date.parse(s.next_attempt_at) : NaN;
  const wait = isNaN(next) ? "" : next > Date.now() ? `next try in ${ms(next - Date.now())} (${when(s.next_attempt_at)})` : "trying again now";
  const what = s.step === "model turn" ? "The model did not answer" : `A step (${s.step}) failed`;
  return h("div", { class: "retry", role: "status" },
    h("p", {}, h("strong", {}, `${what}; retrying`), ` · attempt ${s.attempt}${s.maximum_attempts ? " of " + s.maximum_attempts : ""}`, wait ? " · " + wait : ""),
    s.last_failure ? h("p", { class: "muted" }, "Last error: ", h("code", {}, s.last_failure)) : null);
}

function pretty(v) {
  if (v === undefined || v === null || v === "") return "";
  if (typeof v === "string") { try { return JSON.stringify(JSON.parse(v), null, 2); } catch { return v; } }
  return JSON.stringify(v, null, 2);
}

function approvalLine(r) {
  switch (r.state) {
    case "pending": return `${r.tool} waits for an operator's approval${r.asked_because ? " (" + r.asked_because + ")" : ""}`;
    case "approved": return `${r.tool} approved by ${r.decided_by || "an operator"}`;
    case "used": return `${r.tool} runs, approved by ${r.decided_by || "an operator"}`;
    case "denied": return `${r.tool} denied by ${r.decided_by || "an operator"}${r.reason ? ": " + r.reason : ""}`;
    case "expired": return `${r.tool} was not approved in time and did not run`;
  }
  return `${r.tool}: ${r.state}`;
}
