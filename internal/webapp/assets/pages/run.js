// A run: the transcript, live over /api/runs/{id}/events, tool calls folded
// with their results and metadata, cancel, and the Temporal UI link.
import * as api from "../api.gen.js";
import { h, clear, status, when } from "../ui.js";
import { app, onLeave } from "../state.js";
import { approvalCard } from "./approvals.js";
import { inputCard } from "./inputs.js";
import { runMedia, namesKept } from "./runmedia.js";

const finished = new Set(["succeeded", "failed", "cancelled", "canceled", "completed", "timed_out"]);

export async function runPage(main, id) {
  const detail = await api.get_runs_by_id(id);
  const run = detail.run;
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
  const transcript = h("ol", { class: "transcript", id: "transcript", "aria-live": "polite" });
  // While a call waits for a person, its request shows here with the answers.
  const waiting = h("section", { id: "run-waiting", "aria-live": "polite" });
  const showWaiting = async (st) => {
    if (st !== "waiting") { clear(waiting); return; }
    const [reqs, forms] = await Promise.all([api.get_runs_by_id_approvals(id).catch(() => []), api.get_runs_by_id_inputs(id).catch(() => [])]);
    const open = reqs.filter((r) => r.state === "pending");
    const asks = forms.filter((r) => r.state === "pending");
    const again = () => showWaiting(badge.textContent);
    clear(waiting, open.length ? [h("h2", {}, "Waiting for an approval"), open.map((r) => approvalCard(r, again))] : null,
      asks.length ? [h("h2", {}, "Waiting for input a server asks for"), asks.map((r) => inputCard(r, again))] : null);
  };
  main.append(usageLine, stopped, err, waiting, transcript);
  const calls = new Map(detail.tool_calls.map((c) => [c.call_id, c]));
  const media = runMedia(id);
  await media.load();
  onLeave(() => media.close());
  const byCall = new Map();
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
    const li = h("li", { class: "msg " + m.role }, h("span", { class: "role" }, m.role), m.content ? h("div", { class: "content" }, m.content) : null);
    for (const tc of m.tool_calls || []) {
      const meta = calls.get(tc.id);
      const d = h("details", { class: "call", "data-call": tc.id },
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
    badge.textContent = r.status; badge.className = "badge " + r.status;
    err.textContent = r.error || "";
    stopped.textContent = stopText(r); stopped.hidden = !r.stop_reason;
    cancel.hidden = finished.has(r.status);
    showWaiting(r.status);
  };
  setStatus(run);
  if (finished.has(run.status)) return;
  const es = new EventSource(`/api/runs/${encodeURIComponent(id)}/events?after=${last}`);
  es.addEventListener("message", (ev) => { const e = JSON.parse(ev.data); if (e.message) add(e.message); });
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
  es.addEventListener("status", async (ev) => {
    const e = JSON.parse(ev.data);
    if (e.run) setStatus(e.run);
    const fresh = await api.get_runs_by_id(id).catch(() => null);
    if (fresh) usageLine.textContent = usageText(fresh.usage);
    if (fresh) for (const c of fresh.tool_calls) {
      calls.set(c.call_id, c);
      const d = byCall.get(c.call_id);
      if (d) { d.querySelector(".meta").textContent = pretty({ outcome: c.outcome, duration_ms: c.duration_ms, metadata: c.metadata }); if (!d.querySelector(".result").textContent) d.querySelector(".result").textContent = c.result; }
    }
    if (e.run && finished.has(e.run.status)) es.close();
  });
  onLeave(() => es.close());
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

