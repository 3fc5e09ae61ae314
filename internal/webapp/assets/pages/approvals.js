// Approvals: the calls that wait for a person (docs/adr/0514). The inbox of
// an organisation and the card each request shows, also on its run's page.
import * as api from "../api.gen.js";
import { h, clear, status, when, errorBox } from "../ui.js";
import { onLeave } from "../state.js";
import { inputsSection } from "./inputs.js";

// approvalsPanel lists the organisation's pending requests and refreshes
// while it is open (a new request shows without a reload).
export async function approvalsPanel(panel, orgId) {
  const list = h("ul", { class: "rows", id: "approvals", "aria-live": "polite" });
  const filter = h("select", { "aria-label": "Show requests", onchange: () => load() },
    ["pending", "approved", "denied", "expired", "used"].map((s) => h("option", { value: s }, s)));
  panel.append(h("h2", {}, "Approvals"),
    h("p", { class: "muted" }, "Calls of this organisation's agents that wait for an operator. An approval lets exactly the call shown run, once; other arguments ask again."),
    h("p", {}, filter), list);
  const forms = inputsSection(orgId);
  panel.append(forms.section);
  const load = async () => {
    try {
      const reqs = await api.get_orgs_by_id_approvals(orgId, { query: { state: filter.value } });
      clear(list, reqs.length ? reqs.map((r) => h("li", {}, approvalCard(r, load))) :
        h("li", { class: "muted" }, filter.value === "pending" ? "Nothing waits for an answer." : "None."));
    } catch (e) { clear(list, errorBox(e)); }
  };
  await Promise.all([load(), forms.load()]);
  const timer = setInterval(() => {
    if (filter.value === "pending" && !list.contains(document.activeElement)) load();
    if (forms.busy()) forms.load();
  }, 5000);
  onLeave(() => clearInterval(timer));
}

// approvalCard shows one request: what would run, why it asks, until when,
// and, while it is pending, the answers.
export function approvalCard(r, onDone) {
  const reason = h("input", { type: "text", "aria-label": "Reason (shown to the agent on a denial)", placeholder: "Reason (optional)", maxlength: 2000 });
  const answer = (decision, stop = false) => async () => {
    try {
      await api.post_approvals_by_id(r.id, { decision, reason: reason.value, stop_asking: stop });
      status(decision === "approve" ? "Approved: the call runs now" : "Denied: the agent is told");
    } catch (e) { status(e.message || String(e), "error"); }
    onDone?.();
  };
  const pending = r.state === "pending";
  return h("article", { class: "approval", "data-request": r.id },
    h("h3", {}, h("code", {}, r.tool), " ", h("span", { class: "badge " + r.state }, r.state)),
    h("p", { class: "muted" }, r.asked_because, " · ", h("a", { href: `/runs/${r.run_id}` }, "run ", r.run_id.slice(0, 8)),
      pending ? [" · answer before ", when(r.expires_at)] : r.decided_by ? [" · by ", r.decided_by, r.reason ? ": " + r.reason : ""] : null),
    h("pre", { class: "wrap", "aria-label": "Arguments" }, JSON.stringify(r.arguments, null, 2)),
    pending ? h("div", { class: "actions" }, reason,
      h("button", { type: "button", onclick: answer("approve") }, "Approve"),
      h("button", { type: "button", onclick: answer("approve", true) }, "Approve and stop asking in this run"),
      h("button", { type: "button", class: "danger", onclick: answer("deny") }, "Deny")) : null);
}
