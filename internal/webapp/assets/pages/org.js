import * as api from "../api.gen.js";
import { h, clear, form, tabs, status, errorBox } from "../ui.js";
import { navigate, setTab, refreshMe, app } from "../state.js";
import { toolsView } from "./tools.js";
import { renameForm, notesPanel, secretsPanel } from "./parts.js";
import { collectionsPanel } from "./collections.js";
import { approvalsPanel } from "./approvals.js";
import { budgetsPanel } from "./budgets.js";
import { auditPanel } from "./audit.js";
import { runList } from "./runlist.js";

// orgAgents lists the agents of every guild of an organisation, for the run list's filter.
async function orgAgents(id) {
  const guilds = await api.get_orgs_by_id_guilds(id);
  const lists = await Promise.all(guilds.map((g) => api.get_guilds_by_id_agents(g.id).catch(() => [])));
  return lists.flat();
}

export async function orgPage(main, id) {
  const org = await api.get_orgs_by_id(id);
  const title = h("h1", {}, org.name);
  main.append(h("nav", { class: "crumbs", "aria-label": "Breadcrumb" }, h("a", { href: "/" }, "Organisations"), " / ", org.name), title);
  const tab = new URLSearchParams(location.search).get("tab");
  main.append(tabs([
    { id: "guilds", label: "Guilds", render: (p) => guildsPanel(p, org) },
    { id: "runs", label: "Runs", render: async (p) => runList(p, { label: "Runs",
      agents: await orgAgents(id), load: (query) => api.get_orgs_by_id_runs(id, { query }) }) },
    { id: "tools", label: "Tools", render: (p) => toolsView(p, "organisation", id) },
    { id: "approvals", label: "Approvals", render: (p) => approvalsPanel(p, id) },
    { id: "budgets", label: "Budgets", render: (p) => budgetsPanel(p, "organisation", id) },
    { id: "audit", label: "Audit", render: (p) => auditPanel(p, id) },
    { id: "models", label: "Model keys", render: (p) => modelKeysPanel(p, org) },
    { id: "members", label: "Members", render: (p) => membersPanel(p, org) },
    { id: "collections", label: "Collections", render: (p) => collectionsPanel(p, org) },
    { id: "notes", label: "Notes", render: (p) => notesPanel(p, "organisation", id) },
    { id: "secrets", label: "Secrets", render: (p) => secretsPanel(p, "organisation", id) },
    { id: "settings", label: "Settings", render: async (p) => p.append(
      renameForm(org.name, async (name) => { const o = await api.patch_orgs_by_id(id, { name }); title.textContent = o.name; }),
      await rateForm(id),
      h("button", { type: "button", class: "danger", onclick: async () => {
        if (!confirm(`Delete ${org.name} with every guild and agent?`)) return;
        await api.delete_orgs_by_id(id); status("Organisation deleted"); navigate("/");
      } }, "Delete organisation")) },
  ], tab, setTab));
}

async function guildsPanel(panel, org) {
  const guilds = await api.get_orgs_by_id_guilds(org.id);
  panel.append(h("h2", {}, "Guilds"), h("ul", { class: "rows", id: "guilds" }, guilds.length ? guilds.map((g) =>
    h("li", {}, h("a", { href: `/guilds/${g.id}` }, g.name), g.description ? h("span", { class: "muted" }, " — " + g.description) : null)) :
    h("li", { class: "muted" }, "No guild yet.")),
  h("p", {}, h("a", { href: `/orgs/${org.id}/builder`, class: "button" }, "Build a guild with the coach")),
  h("h3", {}, "New guild"), form({
    label: "New guild", submit: "Create guild",
    fields: [{ name: "name", label: "Name", required: true }, { name: "description", label: "Description" }],
    onSubmit: async (v) => { const g = await api.post_orgs_by_id_guilds(org.id, v); status(`Created ${g.name}`); navigate(`/guilds/${g.id}`); },
  }));
}

async function modelKeysPanel(panel, org) {
  const [providers, keys] = await Promise.all([api.get_orgs_by_id_model_providers(org.id), api.get_orgs_by_id_model_keys(org.id)]);
  const set = new Set(keys.filter((k) => k.set).map((k) => k.provider));
  panel.append(h("h2", {}, "Model keys"), h("p", { class: "muted" }, "A key set here serves this organisation's runs; the box's own keys (Admin → Platform keys) serve every organisation. Values are never shown."),
    h("table", {}, h("thead", {}, h("tr", {}, h("th", {}, "Provider"), h("th", {}, "Key"), h("th", {}, ""))),
      h("tbody", {}, providers.map((p) => h("tr", {},
        h("td", {}, p.provider),
        h("td", {}, p.has_key ? (set.has(p.provider) ? "Set on this organisation" : "The box's key") : h("span", { class: "badge warn" }, "No key yet")),
        h("td", {}, set.has(p.provider) ? h("button", { type: "button", class: "danger small", onclick: async () => {
          if (!confirm(`Remove this organisation's ${p.provider} key? Its runs then use the box's key, if any.`)) return;
          await api.delete_orgs_by_id_model_keys_by_provider(org.id, p.provider); status("Key removed"); refreshMe(); clear(panel); modelKeysPanel(panel, org);
        } }, "Remove") : null))))),
    h("h3", {}, "Set a key"), form({
      label: "Set a model key", submit: "Save key",
      fields: [{ name: "provider", label: "Provider", type: "select", options: providers.map((p) => ({ value: p.provider, label: p.provider })) },
        { name: "key", label: "API key", type: "password", required: true }],
      onSubmit: async (v) => { await api.put_orgs_by_id_model_keys_by_provider(org.id, v.provider, { key: v.key }); status("Key saved"); refreshMe(); clear(panel); modelKeysPanel(panel, org); },
    }));
}

// membersPanel: the organisation's operators; the instance admin adds a
// user of the box or removes one.
async function membersPanel(panel, org) {
  let members;
  try { members = await api.get_orgs_by_id_members(org.id); } catch (e) { panel.append(errorBox(e)); return; }
  const again = () => { clear(panel); membersPanel(panel, org); };
  const admin = !!app.me?.admin;
  panel.append(h("h2", {}, "Members"), h("ul", { class: "rows", id: "members" }, members.length ? members.map((m) => h("li", {}, m.name, " ", h("span", { class: "muted" }, m.role), " ",
    admin ? h("button", { type: "button", class: "danger small", onclick: async () => {
      if (!confirm(`Remove ${m.name} from ${org.name}? They no longer see it.`)) return;
      try { await api.delete_orgs_by_id_members_by_user_id(org.id, m.id); status(`${m.name} removed`); again(); } catch (e) { status(e.message, "error"); }
    } }, `Remove ${m.name}`) : null)) :
    h("li", { class: "muted" }, admin ? "No operator yet: add a user of the box below." : "No operator yet: the box's admin adds them.")));
  if (!admin) return;
  const users = await api.get_users().catch(() => []);
  const here = new Set(members.map((m) => m.id));
  const others = users.filter((u) => !here.has(u.id) && !u.disabled_at);
  panel.append(h("h3", {}, "Add an operator"), others.length ? form({
    label: "Add an operator", submit: "Add operator", cls: "inline",
    fields: [{ name: "user", label: "User", type: "select", options: others.map((u) => ({ value: u.id, label: u.email ? `${u.name} (${u.email})` : u.name })) }],
    onSubmit: async (v) => {
      await api.put_orgs_by_id_members_by_user_id(org.id, v.user, { role: "operator" });
      status(`${others.find((u) => u.id === v.user)?.name || "The user"} is an operator of ${org.name}`); again();
    },
  }) : h("p", { class: "muted" }, "Every user of the box is a member already. Create a user in Admin → Users first."));
}

// rateForm sets the organisation's rate of tool calls; only the instance
// admin may change it, and the answer says so to anyone else.
async function rateForm(id) {
  let cur = { tool_calls_per_minute: 0 };
  try { cur = await api.get_orgs_by_id_settings(id); } catch (e) { return errorBox(e); }
  return h("section", {}, h("h2", {}, "Tool calls"), form({
    label: "Rate of tool calls", submit: "Save rate",
    fields: [{ name: "tool_calls_per_minute", label: "Tool calls a minute, all runs together (0: no limit)", type: "number", min: 0, step: 1, value: cur.tool_calls_per_minute,
      help: "A call past it is refused and the agent told when to retry. Only the instance admin can change it." }],
    onSubmit: async (v) => { const s = await api.put_orgs_by_id_settings(id, v); status(s.tool_calls_per_minute ? `Rate set to ${s.tool_calls_per_minute} a minute` : "No limit"); },
  }));
}
