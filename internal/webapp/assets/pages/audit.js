// The audit trail: who did what with which login. The view and the export
// read one filter object through one query builder (auditQuery), so a
// download holds exactly the events the view pages through. The Go test
// TestAppAuditFieldsAreTheFilter holds auditFields to audit.Filter.
import * as api from "../api.gen.js";
import { h, clear, when, errorBox } from "../ui.js";

// auditFields are the filter's fields, as audit.Filter names them (paging,
// before and limit, is the view's own).
export const auditFields = ["organisation_id", "guild_id", "agent_id", "run_id", "tool", "connection_id", "action", "outcome", "from", "to"];

const actions = ["", "tool_call", "connect", "disconnect", "refresh_failed", "binding", "secret_read", "secret_grant", "approval"];
const pageSize = 50;

// auditQuery is the query string of a filter: only known, non-empty fields;
// times as RFC 3339.
export function auditQuery(filter) {
  const q = new URLSearchParams();
  for (const k of auditFields) {
    let v = filter[k];
    if (!v) continue;
    if (k === "from" || k === "to") v = new Date(v).toISOString();
    q.set(k, v);
  }
  return q;
}

// auditPanel shows an organisation's trail, or with orgId null the whole
// box's (the instance admin's, with an organisation filter).
export async function auditPanel(panel, orgId) {
  const base = orgId ? `/api/orgs/${encodeURIComponent(orgId)}/audit` : "/api/admin/audit";
  const inputs = {};
  const text = (name, label, placeholder = "") =>
    (inputs[name] = h("input", { type: "text", name, "aria-label": label, placeholder: placeholder || label }));
  const fields = [
    orgId ? null : text("organisation_id", "Organisation id"),
    text("guild_id", "Guild id"), text("agent_id", "Agent id"), text("run_id", "Run id"),
    text("tool", "Tool", "Tool (e.g. wallet_send)"), text("connection_id", "Login id"),
    (inputs.action = h("select", { name: "action", "aria-label": "Action" }, actions.map((a) => h("option", { value: a }, a || "any action")))),
    text("outcome", "Outcome", "Outcome (ok, error, denied…)"),
    h("label", {}, "From ", (inputs.from = h("input", { type: "datetime-local", name: "from", "aria-label": "From" }))),
    h("label", {}, "To ", (inputs.to = h("input", { type: "datetime-local", name: "to", "aria-label": "To" }))),
  ];
  const filter = () => Object.fromEntries(Object.entries(inputs).map(([k, el]) => [k, el.value.trim()]));
  const exportLink = h("a", { class: "button", id: "audit-export", download: "audit.jsonl" }, "Export JSONL");
  const body = h("tbody", { id: "audit-rows" });
  const older = h("button", { type: "button", id: "audit-older" }, "Older");
  const newest = h("button", { type: "button", id: "audit-newest" }, "Newest");
  const errors = h("div", { "aria-live": "polite" });
  let before = null;
  const load = async () => {
    const f = filter();
    const q = auditQuery(f);
    exportLink.href = base + "/export" + (q.toString() ? "?" + q : "");
    const query = Object.fromEntries(q);
    query.limit = pageSize;
    if (before) query.before = before;
    clear(errors);
    try {
      const rows = orgId ? await api.get_orgs_by_id_audit(orgId, { query }) : await api.get_admin_audit({ query });
      clear(body, rows.length ? rows.map(row) : h("tr", {}, h("td", { colspan: 8, class: "muted" }, "No events.")));
      body.dataset.query = q.toString(); // the filter the rows answer
      older.disabled = rows.length < pageSize;
      older.onclick = () => { before = rows[rows.length - 1].id; load(); };
      newest.disabled = !before;
    } catch (e) { clear(body); errors.append(errorBox(e)); }
  };
  newest.onclick = () => { before = null; load(); };
  const apply = h("button", { type: "submit" }, "Apply");
  const form = h("form", { class: "filters", id: "audit-filters", onsubmit: (ev) => { ev.preventDefault(); before = null; load(); } }, fields, apply);
  panel.append(h("h2", {}, "Audit trail"),
    h("p", { class: "muted" }, "Every tool call with the login that served it, every connect, disconnect, refresh failure, binding change and secret read or grant, with who did it. Never arguments or values. The export holds every event the filters select."),
    form, h("p", {}, exportLink), errors,
    h("table", { class: "audit" }, h("thead", {}, h("tr", {}, ["When", "Action", "Tool", "Outcome", "Login", "Who", "Run", "Duration"].map((c) => h("th", {}, c)))), body),
    h("p", { class: "actions" }, newest, older));
  await load();
}

function row(e) {
  const login = e.connection_id ? [e.login_scope, e.account_hint ? " · " + e.account_hint : ""].join("") : "—";
  return h("tr", { "data-event": e.id },
    h("td", {}, when(e.at)), h("td", {}, e.action), h("td", {}, h("code", {}, e.tool || ""), e.kind ? " " + e.kind : ""),
    h("td", {}, e.outcome ? h("span", { class: "badge " + e.outcome }, e.outcome) : ""),
    h("td", { title: e.connection_id || "" }, login), h("td", {}, e.actor || ""),
    h("td", {}, e.run_id ? h("a", { href: `/runs/${e.run_id}` }, e.run_id.slice(0, 8)) : ""),
    h("td", {}, e.duration_ms ? e.duration_ms + " ms" : ""));
}
