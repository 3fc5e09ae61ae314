// Run lists at an agent, a guild and an organisation: newest first, filtered
// by status, trigger, agent and time, paged by the API's keyset cursor, and
// kept live by re-reading the pages shown.
import { h, clear, when, errorBox } from "../ui.js";
import { onLeave } from "../state.js";
import { duration, tokens } from "./runparts.js";

const statuses = ["", "queued", "running", "waiting", "completed", "failed", "cancelled"];
const triggers = ["", "direct", "group", "schedule"];
const pageSize = 50;
// How often a shown list re-reads its rows while the page stays open.
const refreshEvery = 5000;

// runList renders a list into panel. load(query) fetches one page; agents
// (optional) are the agents the list may be narrowed to.
export async function runList(panel, { load, agents = null, label = "Runs" }) {
  const inputs = {
    status: h("select", { name: "status", "aria-label": "Status" }, statuses.map((s) => h("option", { value: s }, s || "any status"))),
    trigger: h("select", { name: "trigger", "aria-label": "Trigger" }, triggers.map((s) => h("option", { value: s }, s || "any trigger"))),
    agent_id: agents ? h("select", { name: "agent_id", "aria-label": "Agent" }, h("option", { value: "" }, "any agent"),
      agents.map((a) => h("option", { value: a.id }, a.name))) : null,
    since: h("input", { type: "datetime-local", name: "since", "aria-label": "Started from" }),
    until: h("input", { type: "datetime-local", name: "until", "aria-label": "Started before" }),
  };
  const names = new Map((agents || []).map((a) => [a.id, a.name]));
  const query = () => {
    const q = { limit: pageSize };
    for (const [k, el] of Object.entries(inputs)) {
      if (!el || !el.value) continue;
      q[k] = k === "since" || k === "until" ? new Date(el.value).toISOString() : el.value;
    }
    return q;
  };
  const body = h("tbody", {});
  const more = h("button", { type: "button" }, "Older runs");
  const errors = h("div", { "aria-live": "polite" });
  const count = h("p", { class: "muted", role: "status" });
  let shown = [];
  let q = query();
  const render = () => {
    clear(body, shown.length ? shown.map((r) => row(r, names)) :
      h("tr", {}, h("td", { colspan: agents ? 9 : 8, class: "muted" }, "No run matches.")));
    count.textContent = shown.length === 1 ? "1 run shown" : `${shown.length} runs shown`;
  };
  const first = async () => {
    clear(errors);
    try {
      shown = await load(q);
      more.hidden = shown.length < pageSize;
      render();
    } catch (e) { errors.append(errorBox(e)); }
  };
  more.onclick = async () => {
    try {
      const next = await load({ ...q, before: shown[shown.length - 1].cursor });
      shown = shown.concat(next);
      more.hidden = next.length < pageSize;
      render();
    } catch (e) { errors.append(errorBox(e)); }
  };
  // Live: the newest pages are read again (as many rows as are shown, up to
  // the API's page bound); new runs come in at the top, statuses change.
  const refresh = async () => {
    if (!panel.isConnected) { clearInterval(timer); return; } // another tab took its place
    if (document.hidden) return;
    try {
      const fresh = await load({ ...q, limit: Math.min(Math.max(shown.length, pageSize), 200) });
      const known = new Set(fresh.map((r) => r.id));
      const oldest = fresh.length ? Date.parse(fresh[fresh.length - 1].created_at) : Infinity;
      shown = fresh.concat(shown.filter((r) => !known.has(r.id) && Date.parse(r.created_at) < oldest));
      render();
    } catch { /* the next tick tries again; the rows stay */ }
  };
  const timer = setInterval(refresh, refreshEvery);
  onLeave(() => clearInterval(timer));
  const filters = h("form", { class: "filters run-filters", "aria-label": "Filter runs", onsubmit: (ev) => { ev.preventDefault(); q = query(); first(); } },
    Object.values(inputs).filter(Boolean).map((el) => el.type === "datetime-local" ? h("label", {}, el.getAttribute("aria-label") + " ", el) : el),
    h("button", { type: "submit" }, "Filter"));
  const heads = ["Run", agents ? "Agent" : null, "Trigger", "Status", "Started", "Duration", "Calls", "Tokens in / out", "Errors"].filter(Boolean);
  panel.append(h("h2", {}, label), filters, errors, count,
    h("div", { class: "scroll" }, h("table", { class: "runs", "aria-label": label }, h("thead", {}, h("tr", {}, heads.map((c) => h("th", { scope: "col" }, c)))), body)),
    h("p", { class: "actions" }, more));
  await first();
}

function row(r, names) {
  const first = r.first_message ? r.first_message.split("\n")[0] : "(no message)";
  return h("tr", { "data-run": r.id },
    h("td", {}, h("a", { href: `/runs/${r.id}` }, first.length > 80 ? first.slice(0, 79) + "…" : first)),
    names.size ? h("td", {}, names.get(r.agent_id) || "—") : null,
    h("td", {}, r.trigger),
    h("td", {}, h("span", { class: "badge " + r.status }, r.status)),
    h("td", {}, when(r.started_at || r.created_at)),
    h("td", {}, duration(r)),
    h("td", {}, String(r.calls)),
    h("td", {}, tokens(r.prompt_tokens, r.completion_tokens)),
    h("td", {}, r.errors ? h("span", { class: "bad" }, String(r.errors)) : "0"));
}
