// The operator's inbox: what waits for a person in an organisation, in one
// place: secret requests, calls waiting for approval, servers' forms, and
// the issues agents filed. The navigation shows how many wait in all.
import * as api from "../api.gen.js";
import { h, status, when } from "../ui.js";
import { approvalsPanel } from "./approvals.js";

// waiting counts what waits in one organisation.
async function waiting(orgId) {
  const [approvals, forms, secrets, guilds] = await Promise.all([
    api.get_orgs_by_id_approvals(orgId, { quiet: true }).catch(() => []),
    api.get_orgs_by_id_inputs(orgId, { quiet: true }).catch(() => []),
    api.get_orgs_by_id_secret_requests(orgId, { query: { status: "pending" }, quiet: true }).catch(() => []),
    api.get_orgs_by_id_guilds(orgId, { quiet: true }).catch(() => []),
  ]);
  const issues = await Promise.all(guilds.map((g) => api.get_guilds_by_id_issues(g.id, { query: { status: "open" }, quiet: true })
    .then((l) => l.map((i) => ({ ...i, guild: g }))).catch(() => [])));
  const open = issues.flat();
  return { approvals: approvals.length, forms: forms.length, secrets, issues: open,
    total: approvals.length + forms.length + secrets.length + open.length };
}

// inboxCount is the number the navigation shows: what waits in every
// organisation the operator sees.
export async function inboxCount() {
  const orgs = await api.get_orgs({ quiet: true }).catch(() => []);
  const all = await Promise.all(orgs.map((o) => waiting(o.id)));
  return all.reduce((n, w) => n + w.total, 0);
}

export async function inboxPage(main) {
  main.append(h("h1", {}, "Inbox"));
  const orgs = await api.get_orgs();
  if (!orgs.length) { main.append(h("p", { class: "muted" }, "No organisation yet: nothing can wait for you.")); return; }
  const counts = await Promise.all(orgs.map((o) => waiting(o.id)));
  const asked = new URLSearchParams(location.search).get("org");
  const i = Math.max(0, asked ? orgs.findIndex((o) => o.id === asked) : counts.findIndex((c) => c.total > 0));
  const org = orgs[i], w = counts[i];
  if (orgs.length > 1) {
    main.append(h("nav", { class: "tabs", "aria-label": "Organisations" }, orgs.map((o, j) =>
      h("a", { href: `/inbox?org=${o.id}`, "aria-current": j === i ? "page" : null }, `${o.name} (${counts[j].total})`))));
  }
  main.append(h("p", { class: "muted", id: "inbox-summary" }, w.total ? `${org.name}: ${w.total} waiting — ${w.secrets.length} secret requests, ` +
    `${w.approvals} approvals, ${w.forms} server forms, ${w.issues.length} open issues.` : `Nothing waits in ${org.name}.`));
  main.append(secretRequests(org, w.secrets), openIssues(w.issues));
  const approvals = h("section", {});
  main.append(approvals);
  await approvalsPanel(approvals, org.id);
}

// secretRequests lists the secrets agents asked for; the value typed is
// stored sealed as the agent's secret and never shown again.
function secretRequests(org, reqs) {
  const list = h("ul", { class: "rows", id: "secret-requests" });
  const section = h("section", {}, h("h2", {}, "Secret requests"),
    h("p", { class: "muted" }, "An agent asked for a secret its run needs; the run waits until you answer. The value is stored sealed as the agent's secret."), list);
  if (!reqs.length) { list.append(h("li", { class: "muted" }, "No agent waits for a secret.")); return section; }
  for (const r of reqs) {
    const value = h("input", { type: "password", "aria-label": `Value of ${r.name}`, autocomplete: "off" });
    const answer = (body, done) => async (ev) => {
      ev.target.disabled = true;
      try {
        await api.post_secret_requests_by_id(r.id, body());
        status(done); li.remove();
      } catch (e) { status(e.message, "error"); ev.target.disabled = false; }
    };
    const li = h("li", { class: "secret-request" },
      h("strong", {}, r.name), " ", h("span", { class: "muted" }, `asked ${when(r.created_at)} by a run of this organisation`), " ",
      h("a", { href: `/runs/${r.run_id}` }, "See the run"),
      r.reason ? h("p", {}, r.reason) : null,
      h("div", { class: "actions" }, value,
        h("button", { type: "button", onclick: answer(() => ({ value: value.value }), `${r.name} provided`) }, "Provide"),
        h("button", { type: "button", class: "danger", onclick: answer(() => ({ decline: true }), `${r.name} declined`) }, "Decline")));
    list.append(li);
  }
  return section;
}

function openIssues(issues) {
  const list = h("ul", { class: "rows", id: "inbox-issues" });
  if (!issues.length) list.append(h("li", { class: "muted" }, "No open issue."));
  for (const i of issues) {
    list.append(h("li", {}, h("strong", {}, i.summary || i.kind), " ", h("span", { class: "muted" }, `${i.guild.name} · ${when(i.created_at)}`), " ",
      h("a", { href: `/guilds/${i.guild.id}?tab=issues` }, "Open in the guild"), " · ", h("a", { href: `/issues/${i.id}/studio` }, "Investigate in Studio")));
  }
  return h("section", {}, h("h2", {}, "Issues agents filed"), list);
}

